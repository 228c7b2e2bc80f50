// A small worker pool: at most `concurrency` tasks at once; the first failure stops handing out work
// (running tasks see `signal` aborted) and is rethrown once all started tasks have settled.
export async function runPool<T>(
  items: readonly T[],
  concurrency: number,
  task: (item: T, signal: AbortSignal) => Promise<void>,
  parentSignal?: AbortSignal,
): Promise<void> {
  const controller = new AbortController();
  const onParentAbort = () => controller.abort(parentSignal?.reason);
  if (parentSignal?.aborted) onParentAbort();
  parentSignal?.addEventListener("abort", onParentAbort, { once: true });

  let next = 0;
  let failure: { error: unknown } | undefined;
  const worker = async () => {
    while (!controller.signal.aborted && next < items.length) {
      const item = items[next++] as T;
      try {
        await task(item, controller.signal);
      } catch (error) {
        if (!failure) failure = { error };
        controller.abort(error);
      }
    }
  };
  try {
    const size = Math.max(1, Math.min(concurrency, items.length));
    await Promise.all(Array.from({ length: size }, worker));
  } finally {
    parentSignal?.removeEventListener("abort", onParentAbort);
  }
  if (failure) throw failure.error;
}

/** A counting semaphore: `take()` waits for one of `size` units (first come, first served). */
export class Slots {
  private free: number;
  private readonly waiting: (() => void)[] = [];

  constructor(size: number) {
    this.free = size;
  }

  async take(): Promise<() => void> {
    if (this.free > 0) this.free -= 1;
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      if (next) next();
      else this.free += 1;
    };
  }
}
