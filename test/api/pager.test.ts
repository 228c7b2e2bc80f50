import { describe, expect, it } from "vitest";
import type { AuditLogPage, AuditLogQuery, ConsoleClient } from "../../src/api/client.ts";
import { uncoveredFrom } from "../../src/api/listSpans.ts";
import { type FetchedPage, RunawayPagingError, readPages } from "../../src/api/pager.ts";
import { makeRecord } from "../helpers/auditRecords.ts";
import { FakeConsoleClient } from "../helpers/fakeConsoleClient.ts";

const AT = Date.UTC(2024, 5, 10, 12);
const QUERY = { startDate: "2024-06-10", endDate: "2024-06-10", sortOrder: "desc" } as const;

async function collect(pages: AsyncIterable<FetchedPage>): Promise<FetchedPage[]> {
  const out: FetchedPage[] = [];
  for await (const page of pages) out.push(page);
  return out;
}

function fakeWith(count: number): FakeConsoleClient {
  return new FakeConsoleClient(
    Array.from({ length: count }, (_, i) => ({ at: AT + i * 1000, record: makeRecord(AT + i * 1000) })),
  );
}

const idsOf = (pages: FetchedPage[]) =>
  new Set(pages.flatMap((p) => p.records.map((r) => (r as { id: string }).id)));

/**
 * A server that runs away: page p holds `cycle[(p - 1) % cycle.length]` whatever the page, and claims a
 * total of 1e9 records. It refuses a 101st request, so that a pager that never stops fails the test.
 */
function runawayServer(cycle: readonly unknown[][]): ConsoleClient & { queries: AuditLogQuery[] } {
  const queries: AuditLogQuery[] = [];
  return {
    queries,
    stats: () => ({ requests: queries.length, throttled: 0, retries: 0 }),
    close: async () => {},
    async listAuditLogs(query: AuditLogQuery) {
      queries.push(query);
      if (queries.length > 100) throw new Error("the pager never stopped");
      return {
        records: structuredClone(cycle[(query.page - 1) % cycle.length]!),
        pagination: {
          itemsPerPage: 10,
          pageNumber: query.page,
          totalItems: 1e9,
          nextPage: null,
          previousPage: null,
        },
        requestPath: `/console/v1/audit_logs?page=${query.page}`,
      };
    },
  };
}

const tenRecordsFrom = (at: number) => Array.from({ length: 10 }, (_, i) => makeRecord(at + i));

describe("readPages", () => {
  it("reads every page once, asking ahead but handing pages out in order", async () => {
    const client = fakeWith(95);
    const pages = await collect(readPages(client, QUERY, { limit: 10, prefetch: 4 }));
    expect(pages.map((p) => p.page)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(pages.at(-1)?.last).toBe(true);
    expect(idsOf(pages)).toEqual(new Set(client.ids()));
    expect(client.queries.map((q) => q.page).sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  });

  it("starts at a resumed page and stops after the page holding the stop id", async () => {
    const client = fakeWith(95);
    const newestFirst = [...client.ids()].reverse();
    const stopAtId = newestFirst[34]!; // on page 4 of 10-record pages
    const pages = await collect(readPages(client, QUERY, { limit: 10, prefetch: 1, firstPage: 2, stopAtId }));
    expect(pages.map((p) => p.page)).toEqual([2, 3, 4]);
    expect(pages.at(-1)?.last).toBe(true);
  });

  it("re-reads in order the hole that pages answered out of order leave while the list grows", async () => {
    // Long enough that the in-order pass re-reads more than REPEATED_PAGES_LIMIT pages it has seen.
    const inner = fakeWith(200);
    let inserted = false;
    // Page 2 is answered late, after 4 new records arrived at the head; pages 3+ answered before that.
    const client: ConsoleClient = {
      stats: () => inner.stats(),
      close: () => inner.close(),
      async listAuditLogs(query: AuditLogQuery, signal?: AbortSignal): Promise<AuditLogPage> {
        if (query.page === 2 && !inserted) {
          await new Promise((resolve) => setTimeout(resolve, 20));
          for (let i = 0; i < 4; i += 1) inner.add(AT + 100_000 + i, makeRecord(AT + 100_000 + i));
          inserted = true;
        }
        return inner.listAuditLogs(query, signal);
      },
    };
    const before = new Set(inner.ids());
    const pages = await collect(readPages(client, QUERY, { limit: 10, prefetch: 4 }));
    const read = idsOf(pages);
    for (const id of before) expect(read.has(id)).toBe(true);
    // The hole (original positions 16..19) was read again, in order, after the parallel pass.
    const order = inner.queries.map((q) => q.page);
    expect(order.length).toBeGreaterThan(5);
    expect(pages.map((p) => p.page).slice(0, 5)).toEqual([1, 2, 3, 4, 5]);
  });

  it("stops a server that sends the same page forever, in a bounded number of requests", async () => {
    const repeating = runawayServer([tenRecordsFrom(AT)]);
    await expect(collect(readPages(repeating, QUERY, { limit: 10, prefetch: 4 }))).rejects.toThrow(
      RunawayPagingError,
    );
    expect(repeating.queries.length).toBeLessThanOrEqual(10);
  });

  it("stops a server that alternates between two pages, remembering only the last few pages' ids", async () => {
    const alternating = runawayServer([tenRecordsFrom(AT), tenRecordsFrom(AT + 100)]);
    const read: number[] = [];
    await expect(
      (async () => {
        for await (const page of readPages(alternating, QUERY, { limit: 10, prefetch: 1 }))
          read.push(page.page);
      })(),
    ).rejects.toThrow(/already sent on 5 pages in a row/);
    // Pages 1 and 2 bring new ids; 3..7 only repeat them.
    expect(read).toEqual([1, 2, 3, 4, 5, 6]);
    expect(alternating.queries.length).toBe(7);
  });

  it("stops a server cycling through more distinct pages than it remembers ids of", async () => {
    const cycling = runawayServer(Array.from({ length: 7 }, (_, p) => tenRecordsFrom(AT + p * 100)));
    await expect(collect(readPages(cycling, QUERY, { limit: 10, prefetch: 1 }))).rejects.toThrow(
      /already sent on 5 pages in a row/,
    );
    // Pages 1..7 are new; 8..12 repeat pages 1..5.
    expect(cycling.queries.length).toBe(12);
  });

  it("uncoveredFrom finds the first position no page covered", () => {
    expect(
      uncoveredFrom(
        [
          { from: 0, to: 10 },
          { from: 10, to: 20 },
        ],
        0,
        20,
      ),
    ).toBeNull();
    expect(
      uncoveredFrom(
        [
          { from: 0, to: 10 },
          { from: 12, to: 20 },
        ],
        0,
        20,
      ),
    ).toBe(10);
    expect(uncoveredFrom([{ from: 0, to: 10 }], 0, 15)).toBe(10);
    expect(uncoveredFrom([{ from: 5, to: 20 }], 0, 20)).toBe(0);
  });
});

/**
 * Issue 27 defect 4: a server that serves `real` records honestly, then pages of fresh ids without end,
 * page p claiming `real + (p - 1) × 10` records: the largest-total check never fires, since the total
 * keeps ahead of the pages. It refuses a 101st request.
 */
function endlessFreshIds(real: number): ConsoleClient & { queries: AuditLogQuery[] } {
  const queries: AuditLogQuery[] = [];
  return {
    queries,
    stats: () => ({ requests: queries.length, throttled: 0, retries: 0 }),
    close: async () => {},
    async listAuditLogs(query: AuditLogQuery) {
      queries.push(query);
      if (queries.length > 100) throw new Error("the pager never stopped");
      const records = Array.from({ length: 10 }, (_, i) => {
        const position = (query.page - 1) * 10 + i;
        const record = makeRecord(AT - position * 1000);
        return position < real ? record : { ...record, id: `junk-${position}` };
      });
      return {
        records,
        pagination: {
          itemsPerPage: 10,
          pageNumber: query.page,
          totalItems: real + (query.page - 1) * 10,
          nextPage: null,
          previousPage: null,
        },
        requestPath: `/console/v1/audit_logs?page=${query.page}`,
      };
    },
  };
}

describe("readPages bounded by its first page's totalItems", () => {
  for (const prefetch of [1, 4]) {
    it(`stops a growing total of fresh ids past the first total plus the margin, handing out none of them (prefetch ${prefetch})`, async () => {
      const client = endlessFreshIds(40);
      const handed: FetchedPage[] = [];
      const read = async () => {
        for await (const page of readPages(client, QUERY, { limit: 10, prefetch })) handed.push(page);
      };
      // 40 counted, margin max(2 pages, 4) = 20: page 7 starts at position 60, past the bound.
      await expect(read()).rejects.toThrow(
        "The server kept sending records past the 40 it counted for 2024-06-10..2024-06-10 when the read began (more than 20 more than that, the allowance for records added meanwhile); stopped that read at page 7 and stored none of the records past its count.",
      );
      expect(handed.map((p) => p.page)).toEqual([1, 2, 3, 4]);
      expect([...idsOf(handed)].filter((id) => id.startsWith("junk-"))).toEqual([]);
      expect(Math.max(...client.queries.map((q) => q.page))).toBe(7);
    });
  }

  it("still reads a list that grew at its head by less than the margin, pages past the first total included", async () => {
    // 40 records counted at the start; 15 more arrive at the head while pages 2.. are read.
    const inner = fakeWith(40);
    const original = inner.ids();
    let grown = false;
    const client: ConsoleClient = {
      stats: () => inner.stats(),
      close: async () => {},
      async listAuditLogs(query: AuditLogQuery) {
        if (query.page === 2 && !grown) {
          grown = true;
          for (let i = 0; i < 15; i += 1) inner.add(AT + 100_000 + i, makeRecord(AT + 100_000 + i));
        }
        return inner.listAuditLogs(query);
      },
    };
    const pages = await collect(readPages(client, QUERY, { limit: 10, prefetch: 1 }));
    expect(pages.map((p) => p.page)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(pages.filter((p) => p.last).map((p) => p.page)).toEqual([6]);
    // Every record counted at the start is read (head records that arrive later are the next read's).
    const read = idsOf(pages);
    expect(original.filter((id) => !read.has(id))).toEqual([]);
  });
});
