// A clock for tests. In "auto" mode a sleep moves time forward at once (the code under test never
// really waits); in "manual" mode sleepers stay pending until the test calls advance().
import type { Clock } from "../../src/api/clock.ts";

interface Sleeper {
  until: number;
  resolve: () => void;
}

export class FakeClock implements Clock {
  /** Every sleep requested, in milliseconds, in order. */
  readonly sleeps: number[] = [];
  private sleepers: Sleeper[] = [];

  constructor(
    private current = 1_700_000_000_000,
    private readonly mode: "auto" | "manual" = "auto",
  ) {}

  now(): number {
    return this.current;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    this.sleeps.push(ms);
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (this.mode === "auto") {
      this.current += Math.max(0, ms);
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const sleeper: Sleeper = { until: this.current + ms, resolve };
      this.sleepers.push(sleeper);
      signal?.addEventListener(
        "abort",
        () => {
          this.sleepers = this.sleepers.filter((s) => s !== sleeper);
          reject(signal.reason);
        },
        { once: true },
      );
    });
  }

  /** Manual mode: moves time and wakes the sleepers that are due. */
  async advance(ms: number): Promise<void> {
    this.current += ms;
    const due = this.sleepers.filter((s) => s.until <= this.current);
    this.sleepers = this.sleepers.filter((s) => s.until > this.current);
    for (const sleeper of due) sleeper.resolve();
    await flush();
  }

  get pendingSleepers(): number {
    return this.sleepers.length;
  }
}

/** Lets pending promise callbacks run. */
export async function flush(): Promise<void> {
  for (let i = 0; i < 10; i += 1) await Promise.resolve();
  await new Promise((resolve) => setImmediate(resolve));
}
