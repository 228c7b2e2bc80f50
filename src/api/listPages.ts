// An entity list's pages (config versions, a layer's experiments, an event's metrics), read in order with
// the audit log's page arithmetic (./pageReader.ts) and the same runaway bound (./runawayGuard.ts).
import type { ListPage } from "./consoleClient.ts";
import { endsList, reportedSize } from "./pageReader.ts";
import { PAGES_PAST_TOTAL, RunawayPagingError } from "./runawayGuard.ts";

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
    const perPage = reportedSize(fetched.pagination.itemsPerPage, limit);
    firstTotal ??= fetched.pagination.totalItems;
    if (endsList(fetched.items.length, page, perPage, fetched.pagination.totalItems)) return pages;
    if (complete?.(pages)) return pages;
    // Measured against the first total: a total that grows with every page must not move the limit.
    if (page >= Math.ceil(firstTotal / perPage) + PAGES_PAST_TOTAL) {
      throw new RunawayPagingError(
        `${fetched.requestPath}: the server kept paging ${PAGES_PAST_TOTAL} pages past its first total of ${firstTotal} items.`,
      );
    }
  }
}
