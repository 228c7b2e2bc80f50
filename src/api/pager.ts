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
import type { ConsoleClient } from "./client.ts";
import { type Span, uncoveredFrom } from "./listSpans.ts";
import { type FetchedPage, type PagedQuery, PageReader } from "./pageReader.ts";
import { acceptHeld, type PageBudget, PageRequests } from "./pageRequests.ts";

export type { FetchedPage, PagedQuery } from "./pageReader.ts";
export { RunawayPagingError } from "./runawayGuard.ts";

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
