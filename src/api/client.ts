// Contract of the console API client. The implementation (undici pool, retries, rate budget) lives
// beside this file; sync code depends only on these types.
import type { Pagination } from "./schemas.ts";

type SortOrder = "asc" | "desc";

/** One page request of GET /console/v1/audit_logs. Dates are YYYY-MM-DD in the server's zone. */
export interface AuditLogQuery {
  startDate: string;
  endDate: string;
  page: number;
  limit: number;
  actionTypes?: readonly string[];
  latestID?: string;
  sortOrder?: SortOrder;
}

/** A page as received: the envelope is validated, the records are not (the sync validates each). */
export interface AuditLogPage {
  records: unknown[];
  pagination: Pagination;
  /** Path and query of the request, for quarantine rows and reports. Never holds the key. */
  requestPath: string;
  /** The response's JSON text, when the client keeps it: the records' raw texts are cut from it. */
  body?: string;
}

export interface ClientStats {
  requests: number;
  /** 429 responses received. */
  throttled: number;
  retries: number;
}

export interface ConsoleClient {
  listAuditLogs(query: AuditLogQuery, signal?: AbortSignal): Promise<AuditLogPage>;
  stats(): ClientStats;
  close(): Promise<void>;
}
