// One paged read's judge of each page, in page order (./pager.ts hands them out): the size the server
// pages by (a clamp it reports, or one it does not), whether a page is the last, and whether the server
// runs away (./runawayGuard.ts). The page arithmetic every paged read shares is here: the page size in
// force and the last page, for the audit log's reads and an entity list's (./listPages.ts) alike.
import type { AuditLogPage, AuditLogQuery, ConsoleClient } from "./client.ts";
import type { ReadPagesOptions } from "./pager.ts";
import { RunawayGuard } from "./runawayGuard.ts";

/** What one paged read asks for; page and limit are the pager's business. */
export type PagedQuery = Omit<AuditLogQuery, "page" | "limit">;

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

/** The page size a server says it uses (its itemsPerPage), else the `limit` asked for. */
export const reportedSize = (itemsPerPage: number, limit: number): number =>
  itemsPerPage > 0 ? itemsPerPage : limit;

/** Whether `page` (from 1) of `perPage` records ends the list: it came back empty, or reaches the total. */
export const endsList = (count: number, page: number, perPage: number, totalItems: number): boolean =>
  count === 0 || page * perPage >= totalItems;

function idOf(record: unknown): string | undefined {
  if (record !== null && typeof record === "object" && "id" in record) {
    const id = (record as { id: unknown }).id;
    if (typeof id === "string") return id;
  }
  return undefined;
}

export class PageReader {
  private undeclaredSize = Number.POSITIVE_INFINITY;
  private readonly guard: RunawayGuard;

  constructor(
    private readonly client: ConsoleClient,
    private readonly query: PagedQuery,
    private readonly options: Pick<ReadPagesOptions, "limit" | "stopAtId">,
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
    const reported = reportedSize(itemsPerPage, this.options.limit);
    const perPage = Math.min(reported, this.undeclaredSize);
    const count = response.records.length;
    if (count > 0 && count < perPage && (page - 1) * perPage + count < totalItems) {
      this.undeclaredSize = count;
      return count;
    }
    return perPage;
  }

  /** Judges one page in order: is it the last, and is the server running away? */
  accept(response: AuditLogPage, page: number): FetchedPage {
    const perPage = this.sizeOf(response, page);
    const { totalItems } = response.pagination;
    const ids = response.records.map(idOf);
    const stop = this.options.stopAtId;
    const reachedStop = stop != null && ids.includes(stop);
    const last = endsList(response.records.length, page, perPage, totalItems) || reachedStop;
    this.guard.judgePage(page, perPage, totalItems, ids, last);
    const { records, requestPath, body } = response;
    return { page, records, totalItems, perPage, requestPath, last, body };
  }
}
