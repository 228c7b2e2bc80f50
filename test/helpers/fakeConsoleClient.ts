// An in-memory ConsoleClient with the real service's paging semantics (newest first, page/limit,
// startDate/endDate as inclusive UTC days, latestID exclusive, optional clamped limit). Records every
// query so tests can assert on the requests made.
import type { AuditLogPage, AuditLogQuery, ClientStats, ConsoleClient } from "../../src/api/client.ts";

export interface FakeEntry {
  at: number;
  record: unknown;
}

export interface FakeClientOptions {
  /** The server clamps `limit` to this. */
  maxLimit?: number;
  /** The clamp is silent: `itemsPerPage` echoes the requested limit, not the one used. */
  silentClamp?: boolean;
  /** A server that miscounts: the totalItems it reports for a query. */
  adjustTotal?: (query: AuditLogQuery, total: number) => number;
  /** Runs before each request is answered (insert records, throw, abort…). */
  beforeRequest?: (query: AuditLogQuery, index: number) => void;
}

export class FakeConsoleClient implements ConsoleClient {
  readonly queries: AuditLogQuery[] = [];
  private entries: { at: number; record: unknown; order: number }[] = [];
  private order = 0;
  private counters: ClientStats = { requests: 0, throttled: 0, retries: 0 };

  constructor(
    entries: FakeEntry[] = [],
    private readonly options: FakeClientOptions = {},
  ) {
    for (const entry of entries) this.add(entry.at, entry.record);
  }

  add(at: number, record: unknown): void {
    this.order += 1;
    this.entries.push({ at, record, order: this.order });
  }

  /** Replace a record's content in place (a mutation on the server). */
  replace(id: string, record: unknown): void {
    const entry = this.entries.find((e) => (e.record as { id?: unknown }).id === id);
    if (!entry) throw new Error(`no record ${id}`);
    entry.record = record;
  }

  ids(): string[] {
    return this.entries.map((e) => (e.record as { id: string }).id);
  }

  async listAuditLogs(query: AuditLogQuery, signal?: AbortSignal): Promise<AuditLogPage> {
    signal?.throwIfAborted();
    this.queries.push({ ...query });
    this.counters.requests += 1;
    this.options.beforeRequest?.(query, this.queries.length - 1);
    const day = (at: number) => new Date(at).toISOString().slice(0, 10);
    let list = this.entries
      .filter((e) => day(e.at) >= query.startDate && day(e.at) <= query.endDate)
      .filter((e) => {
        if (!query.actionTypes || query.actionTypes.length === 0) return true;
        return query.actionTypes.includes(String((e.record as { actionType?: unknown }).actionType));
      })
      .sort((a, b) => b.at - a.at || b.order - a.order);
    if (query.sortOrder === "asc") list.reverse();
    if (query.latestID !== undefined) {
      const index = list.findIndex((e) => (e.record as { id?: unknown }).id === query.latestID);
      if (index >= 0) list = list.slice(0, index);
    }
    const limit = Math.min(query.limit, this.options.maxLimit ?? Number.POSITIVE_INFINITY);
    const start = (query.page - 1) * limit;
    const records = list.slice(start, start + limit).map((e) => structuredClone(e.record));
    return {
      records,
      pagination: {
        itemsPerPage: this.options.silentClamp ? query.limit : limit,
        pageNumber: query.page,
        totalItems: this.options.adjustTotal?.(query, list.length) ?? list.length,
        nextPage: null,
        previousPage: null,
        all: "",
      },
      requestPath: `/console/v1/audit_logs?startDate=${query.startDate}&endDate=${query.endDate}&page=${query.page}&limit=${query.limit}`,
    };
  }

  stats(): ClientStats {
    return { ...this.counters };
  }

  async close(): Promise<void> {}
}
