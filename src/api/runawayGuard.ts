// Whether a server pages without end: the same records again and again, or full pages past its own
// total. Judged page by page, in page order, for one paged read: the audit log's (src/api/pager.ts) and an
// entity list's (src/api/listPages.ts) alike.
import { createHash } from "node:crypto";
import { FlagtrailError } from "../errors.ts";

/** The server kept paging without end: the same records again and again, or pages past its own total. */
export class RunawayPagingError extends FlagtrailError {}

/**
 * Pages in a row that are runaway: they bring no record id unseen in the pages just before them, or
 * repeat an earlier page of the read exactly. Only the last pages' ids are remembered, and of the rest a
 * digest per page: a read's memory stays flat however many records a window holds (all of a read's ids
 * cost ~5 MB per 70,000-record window), and a server cycling through more pages is still stopped.
 */
const REPEATED_PAGES_LIMIT = 5;
/** Pages tolerated past what the largest totalItems allows (a list growing while we read). */
const PAGES_PAST_TOTAL = 10;

/**
 * Records a read may go past the totalItems its first page reported: records added at the head while we
 * page push older ones to later pages. Two pages, or a tenth of that total, whichever is more. A server
 * whose total grows with every page (fresh ids without end) is stopped here, which the largest-total
 * check above cannot do.
 */
function headInsertMargin(firstTotal: number, perPage: number): number {
  return Math.max(2 * perPage, Math.ceil(firstTotal / 10));
}

export class RunawayGuard {
  /** The ids of the last REPEATED_PAGES_LIMIT pages judged, oldest first. */
  private recent: Set<string>[] = [];
  /** A digest of each page's ids judged in this pass. */
  private readonly pageDigests = new Set<string>();
  private staleRun = 0;
  private maxTotal = 0;
  /** The first page's totalItems and size: the bound of the whole read (a second pass keeps it). */
  private first: { total: number; perPage: number } | null = null;

  /** `read` names the read in messages (an audit window's date range, an entity list's path). */
  constructor(private readonly read: string) {}

  /** A second pass over pages already read (a hole): repeats are expected against the first pass. */
  startPass(): void {
    this.recent = [];
    this.pageDigests.clear();
    this.staleRun = 0;
  }

  /**
   * Judges `page`, the next in order, by its page size in force, the server's total, its records' ids and
   * whether it is the last: throws RunawayPagingError when the server runs away.
   */
  judgePage(
    page: number,
    perPage: number,
    totalItems: number,
    ids: readonly (string | undefined)[],
    last: boolean,
  ) {
    this.first ??= { total: totalItems, perPage };
    this.judgeFirstTotal(page, perPage, this.first.total, this.first.perPage);
    this.judgeRepeats(ids, page, totalItems);
    if (!last) this.judgePastTotal(page, perPage);
  }

  /** Judges the record ids of `page`, the next page in order; throws once too many pages repeat. */
  private judgeRepeats(ids: readonly (string | undefined)[], page: number, totalItems: number): void {
    this.maxTotal = Math.max(this.maxTotal, totalItems);
    const fresh = ids.filter((id) => id === undefined || !this.recent.some((seen) => seen.has(id))).length;
    this.recent.push(new Set(ids.filter((id) => id !== undefined)));
    if (this.recent.length > REPEATED_PAGES_LIMIT) this.recent.shift();
    const digest = createHash("sha1").update(ids.join("\n")).digest("base64");
    const repeated = this.pageDigests.has(digest);
    this.pageDigests.add(digest);
    this.staleRun = ids.length > 0 && (fresh === 0 || repeated) ? this.staleRun + 1 : 0;
    if (this.staleRun >= REPEATED_PAGES_LIMIT) {
      throw new RunawayPagingError(
        `The server returned only records it had already sent on ${this.staleRun} pages in a row for ` +
          `${this.read} (page ${page}, totalItems ${totalItems}); stopped that read.`,
      );
    }
  }

  /**
   * Throws when `page` starts past the bound the read's first page set: its totalItems plus
   * headInsertMargin.
   */
  private judgeFirstTotal(page: number, perPage: number, firstTotal: number, firstPerPage: number): void {
    const margin = headInsertMargin(firstTotal, firstPerPage);
    if ((page - 1) * perPage >= firstTotal + margin) {
      throw new RunawayPagingError(
        `The server kept sending records past the ${firstTotal} it counted for ${this.read} when the read ` +
          `began (more than ${margin} more than that, the allowance for records added meanwhile); stopped ` +
          `that read at page ${page} and stored none of the records past its count.`,
      );
    }
  }

  /** Throws when `page`, not the last, lies too far past what the largest totalItems allows. */
  private judgePastTotal(page: number, perPage: number): void {
    if (page > Math.ceil(this.maxTotal / perPage) + PAGES_PAST_TOTAL) {
      throw new RunawayPagingError(
        `The server kept returning full pages past its totalItems (${this.maxTotal}) for ` +
          `${this.read}; stopped at page ${page}.`,
      );
    }
  }
}
