// The entity lists' pager: pages in order until the total is reached or a page comes back empty, the
// size the server reports wins, and a server that runs away is stopped as the audit pager stops it
// (src/api/runawayGuard.ts): pages that repeat, a list growing past its first total's margin. The
// requests are counted: the bound is in requests, not only in the error.
import { describe, expect, it } from "vitest";
import type { ListPage } from "../../src/api/consoleClient.ts";
import { readListPages } from "../../src/api/listPages.ts";
import { RunawayPagingError } from "../../src/api/runawayGuard.ts";

function page(n: number, items: unknown[], perPage: number, total: number): ListPage {
  return {
    items,
    pagination: { itemsPerPage: perPage, pageNumber: n, totalItems: total },
    requestPath: `/console/v1/x?page=${n}`,
  };
}

describe("readListPages", () => {
  it("reads pages in order with the size the server reports", async () => {
    const asked: [number, number][] = [];
    const pages = await readListPages(async (n, limit) => {
      asked.push([n, limit]);
      // The server grants 2 whatever is asked.
      return page(
        n,
        [2 * n - 1, 2 * n].filter((i) => i <= 5),
        2,
        5,
      );
    }, 100);
    expect(asked).toEqual([
      [1, 100],
      [2, 100],
      [3, 100],
    ]);
    expect(pages.flatMap((p) => p.items)).toEqual([1, 2, 3, 4, 5]);
  });

  it("stops at an empty page, and calls a server that pages past its total runaway", async () => {
    expect(await readListPages(async (n) => page(n, n === 1 ? [1] : [], 1, 9), 1)).toHaveLength(2);
    // A total that grows with every page (the server lies about it).
    await expect(readListPages(async (n) => page(n, [n], 1, n + 1), 1)).rejects.toBeInstanceOf(
      RunawayPagingError,
    );
  });

  /** A simulated list server: `serve(n)` answers page n; counts the requests. */
  function server(serve: (n: number) => ListPage) {
    const asked = { requests: 0 };
    return {
      asked,
      fetch: async (n: number) => {
        asked.requests += 1;
        return serve(n);
      },
    };
  }
  const items = (from: number, count: number) =>
    Array.from({ length: count }, (_, i) => ({ id: `i${from + i}` }));

  it("stops a server that repeats the same page forever after five repeats, whatever total it claims", async () => {
    // Before the shared guard: pages up to its total plus ten (5,010 requests here).
    const same = server((n) => page(n, items(0, 2), 2, 10_000));
    await expect(readListPages(same.fetch, 2)).rejects.toThrow(/already sent on 5 pages in a row/);
    expect(same.asked.requests).toBe(6);
    // Two pages in turn: every page after them repeats one of them.
    const cycling = server((n) => page(n, items(n % 2 === 0 ? 0 : 2, 2), 2, 10_000));
    await expect(readListPages(cycling.fetch, 2)).rejects.toBeInstanceOf(RunawayPagingError);
    expect(cycling.asked.requests).toBe(7);
  });

  it("stops a list that grows forever at the first total's margin, and reads one growing at its head to its end", async () => {
    // Fresh items on every page, and a total always a page ahead: 4 items counted first, a margin of two
    // pages (as the audit pager's), so page 5 starts past it.
    const growing = server((n) => page(n, items(2 * n, 2), 2, 2 * n + 2));
    await expect(readListPages(growing.fetch, 2)).rejects.toThrow(/past the 4 it counted/);
    expect(growing.asked.requests).toBe(5);
    // One item added at the head before each request: items move to later pages, the read still ends.
    const list = items(0, 6);
    const headGrows = server((n) => {
      list.unshift({ id: `new${n}` });
      return page(n, list.slice(2 * (n - 1), 2 * n), 2, list.length);
    });
    const pages = await readListPages(headGrows.fetch, 2);
    expect(headGrows.asked.requests).toBe(6);
    expect(new Set(pages.flatMap((p) => p.items.map((i) => (i as { id: string }).id)))).toContain("i5");
  });
});
