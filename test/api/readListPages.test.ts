// The entity lists' pager: pages in order until the total is reached or a page comes back empty, the
// size the server reports wins, and a server paging past its own total is stopped.
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
});
