// An entity list's pages (config versions, a layer's experiments, an event's metrics), read in order with
// the audit log's page arithmetic (./pageReader.ts) and judged by the audit pager's runaway guard
// (./runawayGuard.ts): the same bound past the first page's total, the same stop for pages that repeat.
import { createHash } from "node:crypto";
import type { ListPage } from "./consoleClient.ts";
import { endsList, reportedSize } from "./pageReader.ts";
import { RunawayGuard } from "./runawayGuard.ts";

/** One page of a console list other than the audit log (entity lists take only `page` and `limit`). */
export type ListPageFetcher = (page: number, limit: number) => Promise<ListPage>;

// An item as the guard knows it: a digest of its JSON. An entity list's items carry no id of one kind (a
// config's versions all carry the config's), and an item sent again is sent the same; a digest keeps the
// guard's memory small whatever an item's size (a config version can be large).
const itemKey = (item: unknown) => createHash("sha1").update(JSON.stringify(item)).digest("base64");

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
  let guard: RunawayGuard | undefined;
  for (let page = 1; ; page += 1) {
    const fetched = await fetchPage(page, limit);
    pages.push(fetched);
    const perPage = reportedSize(fetched.pagination.itemsPerPage, limit);
    const { totalItems } = fetched.pagination;
    const last = endsList(fetched.items.length, page, perPage, totalItems);
    // Named in its messages by the list's path (its first request's, without the query).
    guard ??= new RunawayGuard(fetched.requestPath.split("?")[0]!);
    guard.judgePage(page, perPage, totalItems, fetched.items.map(itemKey), last);
    if (last || complete?.(pages)) return pages;
  }
}
