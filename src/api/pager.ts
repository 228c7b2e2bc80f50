// Paging written once: every paged read of the audit log (a sync window, a day repair) goes through
// readPages. Page 1 (or the resume page) is read alone; its totalItems says how many pages follow, and
// those are requested ahead, up to `prefetch` at a time, but handed to the caller strictly in page
// order. The list is newest first and only grows at its head while we page (new activity), which pushes
// records towards later pages: each page's totalItems tells how far the list had shifted when that page
// was answered, so the positions every page covered can be computed, and a hole left by pages answered
// out of order is read again, page by page in order (sequential reading provably misses nothing).
// What the first page counted also bounds the read: pages past that total (older records pushed down by
// new ones) are held back until the read ends, and a read that goes further past it than
// headInsertMargin allows stops with RunawayPagingError, handing out none of them.
import type { AuditLogPage, AuditLogQuery, ConsoleClient } from "./client.ts";
import type { ListPage } from "./consoleClient.ts";
import { type Span, uncoveredFrom } from "./listSpans.ts";
import { PAGES_PAST_TOTAL, RunawayGuard, RunawayPagingError } from "./runawayGuard.ts";

export { RunawayPagingError } from "./runawayGuard.ts";

/** What one paged read asks for; page and limit are the pager's business. */
export type PagedQuery = Omit<AuditLogQuery, "page" | "limit">;

export interface ReadPagesOptions {
  /** Requested `limit`; the size the server reports in itemsPerPage (or silently uses) wins. */
  limit: number;
  /** The first page to read (a resumed window starts where it stopped). */
  firstPage?: number;
  /** Pages requested ahead of the one being handed out (1 = strictly sequential). */
  prefetch?: number;
  /** Stop after the page holding this record id (the checkpoint), for servers that ignore latestID. */
  stopAtId?: string | null;
  signal?: AbortSignal;
  /**
   * Shared by reads running side by side: a unit is held from a page's request until the caller has
   * taken the page, so requests in flight plus pages waiting their turn stay within it (memory).
   */
  budget?: PageBudget;
}

interface PageBudget {
  /** Waits for a unit; the returned function gives it back. */
  take(): Promise<() => void>;
}

interface HeldPage {
  response: AuditLogPage;
  release: () => void;
}

export interface FetchedPage {
  page: number;
  records: unknown[];
  /** The server's total for the query when it answered this page. */
  totalItems: number;
  /** The page size in force for this page. */
  perPage: number;
  requestPath: string;
  /** No page follows in this read. */
  last: boolean;
  /** The response's JSON text, when the client kept it (AuditLogPage.body). */
  body?: string | undefined;
}

function idOf(record: unknown): string | undefined {
  if (record !== null && typeof record === "object" && "id" in record) {
    const id = (record as { id: unknown }).id;
    if (typeof id === "string") return id;
  }
  return undefined;
}

class PageReader {
  private undeclaredSize = Number.POSITIVE_INFINITY;
  private readonly guard: RunawayGuard;

  constructor(
    private readonly client: ConsoleClient,
    private readonly query: PagedQuery,
    private readonly options: ReadPagesOptions,
  ) {
    this.guard = new RunawayGuard(`${query.startDate}..${query.endDate}`);
  }

  /** A second pass over pages already read (a hole): repeats are expected against the first pass. */
  startPass(): void {
    this.guard.startPass();
  }

  fetch(page: number, signal: AbortSignal | undefined): Promise<AuditLogPage> {
    return this.client.listAuditLogs({ ...this.query, page, limit: this.options.limit }, signal);
  }

  /**
   * The size of the server's pages. It may clamp `limit`: arithmetic uses the itemsPerPage it reports,
   * unless a page comes back short while totalItems says records remain after it — a clamp it did not
   * declare; from then on the size it actually used drives paging.
   */
  sizeOf(response: AuditLogPage, page: number): number {
    const { itemsPerPage, totalItems } = response.pagination;
    const reported = itemsPerPage > 0 ? itemsPerPage : this.options.limit;
    const perPage = Math.min(reported, this.undeclaredSize);
    const count = response.records.length;
    if (count > 0 && count < perPage && (page - 1) * perPage + count < totalItems) {
      this.undeclaredSize = count;
      return count;
    }
    return perPage;
  }

  /** The first page's totalItems and size: the bound of the whole read. */
  private first: { total: number; perPage: number } | null = null;

  /** Judges one page in order: is it the last, and is the server running away? */
  accept(response: AuditLogPage, page: number): FetchedPage {
    const perPage = this.sizeOf(response, page);
    const { totalItems } = response.pagination;
    this.first ??= { total: totalItems, perPage };
    this.guard.judgeFirstTotal(page, perPage, this.first.total, this.first.perPage);
    const ids = response.records.map(idOf);
    this.guard.judgeRepeats(ids, page, totalItems);
    const stop = this.options.stopAtId;
    const reachedStop = stop != null && ids.includes(stop);
    const last = response.records.length === 0 || page * perPage >= totalItems || reachedStop;
    if (!last) this.guard.judgePastTotal(page, perPage);
    const { records, requestPath, body } = response;
    return { page, records, totalItems, perPage, requestPath, last, body };
  }
}

/**
 * The requests of one read: pages asked ahead, each holding a unit of the shared budget until the
 * caller takes it, all cancelled when the caller's signal aborts or the read ends.
 */
class PageRequests {
  private readonly inFlight = new Map<number, Promise<HeldPage>>();
  private readonly controller = new AbortController();
  private readonly onAbort = () => this.controller.abort(this.options.signal?.reason);

  constructor(
    private readonly reader: PageReader,
    private readonly options: ReadPagesOptions,
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
function acceptHeld(reader: PageReader, held: HeldPage, page: number): FetchedPage {
  try {
    return reader.accept(held.response, page);
  } catch (error) {
    held.release();
    throw error;
  }
}

/**
 * Reads a query's pages in order. Yields each page as soon as it and all pages before it are in.
 * Aborting `signal` stops issuing requests; requests in flight are cancelled.
 */
export async function* readPages(
  client: ConsoleClient,
  query: PagedQuery,
  options: ReadPagesOptions,
): AsyncGenerator<FetchedPage, void, undefined> {
  const reader = new PageReader(client, query, options);
  const firstPage = options.firstPage ?? 1;
  const prefetch = Math.max(1, options.prefetch ?? 1);
  const requests = new PageRequests(reader, options);
  try {
    const firstHeld = await requests.take(firstPage);
    const first = acceptHeld(reader, firstHeld, firstPage);
    try {
      yield first;
    } finally {
      firstHeld.release();
    }
    if (first.last) return;
    const base = first.totalItems;
    const covered: Span[] = [{ from: (firstPage - 1) * first.perPage, to: firstPage * first.perPage }];
    let page = firstPage + 1;
    let sequential = prefetch === 1;
    // Pages past the first total, handed out only once the read has ended within its bound.
    const heldBack: FetchedPage[] = [];
    for (;;) {
      // Ask ahead, never past the pages the first total allows (later ones are asked when needed).
      if (!sequential) requests.askAhead(page, prefetch, Math.max(page, Math.ceil(base / first.perPage)));
      const held = await requests.take(page);
      const fetched = acceptHeld(reader, held, page);
      const shift = fetched.totalItems - base;
      covered.push({ from: (page - 1) * fetched.perPage - shift, to: page * fetched.perPage - shift });
      // Pages answered out of order while the list grew can leave a hole: re-read it in order.
      const hole =
        fetched.last && !sequential ? uncoveredFrom(covered, (firstPage - 1) * first.perPage, base) : null;
      const ends = fetched.last && hole === null;
      if (!ends && (heldBack.length > 0 || page * fetched.perPage > base)) {
        heldBack.push(fetched);
        held.release();
      } else {
        try {
          for (const kept of ends ? heldBack.splice(0) : []) yield { ...kept, last: false };
          yield fetched;
        } finally {
          held.release();
        }
        if (ends) return;
      }
      if (hole !== null) {
        sequential = true;
        reader.startPass();
        requests.dropAll();
        page = Math.floor((hole + fetched.totalItems - base) / fetched.perPage) + 1;
        continue;
      }
      page += 1;
    }
  } finally {
    requests.close();
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

/** One page of a console list other than the audit log (entity lists take only `page` and `limit`). */
export type ListPageFetcher = (page: number, limit: number) => Promise<ListPage>;

/**
 * Every item of an entity list (config versions, a layer's experiments, an event's metrics), pages read
 * strictly in order. readPages is not used: it is typed to the audit query (dates, latestID, the
 * checkpoint stop) and its hole re-reading exists for pages requested ahead; these lists are a page or
 * two, read sequentially, which misses nothing even when the list grows at its head meanwhile (items
 * only move to later pages: the caller drops the repeats by key). The same runaway guard applies.
 * `complete` (optional) tells when the caller already holds the rest of the list: no further page then.
 */
export async function readListPages(
  fetchPage: ListPageFetcher,
  limit: number,
  complete?: (pages: readonly ListPage[]) => boolean,
): Promise<ListPage[]> {
  const pages: ListPage[] = [];
  let firstTotal: number | undefined;
  for (let page = 1; ; page += 1) {
    const fetched = await fetchPage(page, limit);
    pages.push(fetched);
    const perPage = fetched.pagination.itemsPerPage > 0 ? fetched.pagination.itemsPerPage : limit;
    firstTotal ??= fetched.pagination.totalItems;
    if (fetched.items.length === 0 || page * perPage >= fetched.pagination.totalItems) return pages;
    if (complete?.(pages)) return pages;
    // Measured against the first total: a total that grows with every page must not move the limit.
    if (page >= Math.ceil(firstTotal / perPage) + PAGES_PAST_TOTAL) {
      throw new RunawayPagingError(
        `${fetched.requestPath}: the server kept paging ${PAGES_PAST_TOTAL} pages past its first total of ${firstTotal} items.`,
      );
    }
  }
}
