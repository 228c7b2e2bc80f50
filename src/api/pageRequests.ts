// The requests of one paged read (./pager.ts decides which pages and in what order): pages asked ahead of
// the one handed out, each holding a unit of a budget shared by reads side by side until the caller has
// taken it, all cancelled when the caller aborts or the read ends.
import type { AuditLogPage } from "./client.ts";
import type { FetchedPage, PageReader } from "./pageReader.ts";
import type { ReadPagesOptions } from "./pager.ts";

export interface PageBudget {
  /** Waits for a unit; the returned function gives it back. */
  take(): Promise<() => void>;
}

export interface HeldPage {
  response: AuditLogPage;
  release: () => void;
}

/**
 * The requests of one read: pages asked ahead, each holding a unit of the shared budget until the
 * caller takes it, all cancelled when the caller's signal aborts or the read ends.
 */
export class PageRequests {
  private readonly inFlight = new Map<number, Promise<HeldPage>>();
  private readonly controller = new AbortController();
  private readonly onAbort = () => this.controller.abort(this.options.signal?.reason);

  constructor(
    private readonly reader: PageReader,
    private readonly options: Pick<ReadPagesOptions, "signal" | "budget">,
  ) {
    if (options.signal?.aborted) this.onAbort();
    options.signal?.addEventListener("abort", this.onAbort, { once: true });
  }

  /** Asks for the pages from `page` on, `count` at most, never past `lastKnown`. */
  askAhead(page: number, count: number, lastKnown: number): void {
    for (let ahead = page; ahead < page + count && ahead <= lastKnown; ahead += 1) {
      if (!this.inFlight.has(ahead)) this.inFlight.set(ahead, quiet(this.fetchHeld(ahead)));
    }
  }

  /** The page's response: the one asked ahead, else one requested now. */
  take(page: number): Promise<HeldPage> {
    const pending = this.inFlight.get(page) ?? this.fetchHeld(page);
    this.inFlight.delete(page);
    return pending;
  }

  /** Pages asked ahead and no longer wanted give their unit back once they settle. */
  dropAll(): void {
    for (const pending of this.inFlight.values())
      pending.then(
        (held) => held.release(),
        () => undefined,
      );
    this.inFlight.clear();
  }

  close(): void {
    this.options.signal?.removeEventListener("abort", this.onAbort);
    this.controller.abort();
    this.dropAll();
  }

  private async fetchHeld(page: number): Promise<HeldPage> {
    const release = this.options.budget ? await this.options.budget.take() : () => {};
    try {
      return { response: await this.reader.fetch(page, this.controller.signal), release };
    } catch (error) {
      release();
      throw error;
    }
  }
}

/** Judges a page in order (reader.accept); a page refused gives its budget unit back first. */
export function acceptHeld(reader: PageReader, held: HeldPage, page: number): FetchedPage {
  try {
    return reader.accept(held.response, page);
  } catch (error) {
    held.release();
    throw error;
  }
}

/**
 * A page asked ahead may fail before anyone awaits it (or never be awaited when the read stops early):
 * mark its rejection handled now; awaiting the same promise later still throws.
 */
function quiet<T>(promise: Promise<T>): Promise<T> {
  promise.catch(() => undefined);
  return promise;
}
