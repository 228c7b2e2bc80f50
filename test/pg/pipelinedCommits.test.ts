// On PostgreSQL the sync prepares the next batch while one commits (src/sync/run.ts). The test holds
// batches' commits on the server (a trigger waiting for advisory locks the test holds) and checks: the
// sync reads on meanwhile; commits keep the pages' order; a failed commit leaves exactly the pages before
// it with their progress, and no batch after it commits though it was already queued. And a batch costs
// a few statements whatever its page count: each round trip of a commit waits behind the page being
// prepared meanwhile.
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import type { AuditLogQuery } from "../../src/api/client.ts";
import { CHAIN_GENESIS, chainLink } from "../../src/hash.ts";
import { openStore, type Store } from "../../src/store/syncStore.ts";
import { runSync, type SyncOptions } from "../../src/sync/runSync.ts";
import { makeRecord } from "../helpers/auditRecords.ts";
import { FakeConsoleClient } from "../helpers/fakeConsoleClient.ts";
import { freshDatabase, queryOnce, recordStatements } from "./cluster.ts";

const DAY = 86_400_000;
const NOW = Date.UTC(2024, 5, 30, 12, 0, 0);
const PAGE = 10;
const PAGES = 8;
// One window (10 days), a page per batch, two requests at once.
const options: SyncOptions = {
  now: () => NOW,
  since: "2024-06-20",
  pageSize: PAGE,
  concurrency: 2,
  batchRecords: PAGE,
  coverage: false,
  entities: false,
};

/** PAGE × PAGES records over the 9 days before NOW, newest first as the service pages them. */
function history() {
  return Array.from({ length: PAGE * PAGES }, (_, i) => {
    const at = NOW - DAY * 9 + i * 3_600_000;
    return { at, record: makeRecord(at) };
  }).reverse();
}

/**
 * Inserting a record of page 2 waits for the advisory lock HOLD_PAGE_2, one of page 3 for HOLD_PAGE_3 and
 * then fails: the test holds both. COPY and INSERT fire the trigger alike.
 */
const HOLD_PAGE_2 = 7201;
const HOLD_PAGE_3 = 7202;
async function holdInserts(url: string, page2: readonly string[], page3: readonly string[]) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query("CREATE TABLE test_held_ids (id text PRIMARY KEY, lock_key integer, fail boolean)");
  await client.query(
    `INSERT INTO test_held_ids SELECT unnest($1::text[]), ${HOLD_PAGE_2}, false
     UNION ALL SELECT unnest($2::text[]), ${HOLD_PAGE_3}, true`,
    [page2, page3],
  );
  await client.query(`CREATE FUNCTION test_hold_insert() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE held test_held_ids;
    BEGIN
      SELECT * INTO held FROM test_held_ids WHERE id = NEW.id;
      IF FOUND THEN
        PERFORM pg_advisory_xact_lock_shared(held.lock_key);
        IF held.fail THEN RAISE EXCEPTION 'injected insert failure'; END IF;
      END IF;
      RETURN NEW;
    END $$`);
  await client.query(
    "CREATE TRIGGER test_hold_insert BEFORE INSERT ON audit_logs FOR EACH ROW EXECUTE FUNCTION test_hold_insert()",
  );
  await client.query("SELECT pg_advisory_lock($1), pg_advisory_lock($2)", [HOLD_PAGE_2, HOLD_PAGE_3]);
  return {
    release: async (key: number) => {
      await client.query("SELECT pg_advisory_unlock($1)", [key]);
    },
    end: () => client.end(),
  };
}

/** The statements between each BEGIN and its COMMIT or ROLLBACK, in order. */
function transactionsOf(statements: readonly string[]): string[][] {
  const transactions: string[][] = [];
  let open: string[] | null = null;
  for (const text of statements) {
    if (/^BEGIN/i.test(text)) open = [];
    open?.push(text);
    if (open && /^(COMMIT|ROLLBACK)/i.test(text)) {
      transactions.push(open);
      open = null;
    }
  }
  return transactions;
}

async function waitUntil(ready: () => boolean): Promise<void> {
  for (let waited = 0; waited < 30_000; waited += 20) {
    if (ready()) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`condition not reached in time`);
}

let store: Store | undefined;
afterEach(async () => {
  await store?.close();
  store = undefined;
});

describe("a PostgreSQL sync's batches", () => {
  it("are prepared while one commits, in order; a failed commit keeps exactly the pages before it", async () => {
    const url = await freshDatabase("pipeline");
    store = await openStore(url);
    const entries = history();
    const ids = entries.map((e) => (e.record as { id: string }).id);
    const pageIds = (page: number) => ids.slice((page - 1) * PAGE, page * PAGE);
    const asked: AuditLogQuery[] = [];
    const client = new FakeConsoleClient(entries, { beforeRequest: (q) => asked.push(q) });
    const gate = await holdInserts(url, pageIds(2), pageIds(3));
    try {
      const outcome = runSync(store, client, options).then(
        () => "committed",
        (error: unknown) => String(error),
      );
      // Two pages are requested or waiting at most, and a page's unit comes back when the next one is
      // asked of the pager: page n + 1 is requested once page n has been handed to the writer. Page 3
      // is handed over (and its batch queued) while page 2's commit is held: the read goes on.
      const asks = (page: number) => () => asked.some((q) => q.limit === PAGE && q.page === page);
      await waitUntil(asks(4));
      // Page 2's commit ends; page 4's batch is queued behind page 3's, which then fails.
      await gate.release(HOLD_PAGE_2);
      await waitUntil(asks(5));
      await gate.release(HOLD_PAGE_3);
      expect(await outcome).toMatch(/injected insert failure/);
    } finally {
      await gate.end();
    }
    // Pages 1 and 2, in the order read, and the window's progress says page 3 comes next.
    const stored = await queryOnce<{ id: string }>(url, "SELECT id FROM audit_logs ORDER BY seq");
    expect(stored.map((r) => r.id)).toEqual([...pageIds(1), ...pageIds(2)]);
    expect(await queryOnce(url, "SELECT next_page, status FROM sync_windows")).toEqual([
      { next_page: 3, status: "pending" },
    ]);
    const [run] = await queryOnce<{ outcome: string; inserted: number }>(
      url,
      "SELECT outcome, inserted FROM sync_runs ORDER BY id DESC LIMIT 1",
    );
    expect(run).toEqual({ outcome: "failed", inserted: 2 * PAGE });

    // The next sync resumes at page 3: every record once, in the service's order, the chain whole.
    await queryOnce(url, "DROP TRIGGER test_hold_insert ON audit_logs");
    const summary = await runSync(store, new FakeConsoleClient(entries), options);
    expect(summary).toMatchObject({ outcome: "ok", inserted: PAGE * (PAGES - 2), duplicates: 0 });
    const rows = await queryOnce<{ id: string; seq: string; record_hash: string; chain_hash: string }>(
      url,
      "SELECT id, seq, record_hash, chain_hash FROM audit_logs ORDER BY seq",
    );
    expect(rows.map((r) => r.id)).toEqual(ids);
    let link = CHAIN_GENESIS;
    rows.forEach((row, i) => {
      expect(Number(row.seq)).toBe(i + 1);
      link = chainLink(link, row.record_hash);
      expect(row.chain_hash).toBe(link);
    });
  });

  it("cost a few statements each, not some per page", async () => {
    const url = await freshDatabase("pipeline_statements");
    store = await openStore(url);
    // Every statement the store's sessions send during the sync (COPY streams included).
    const { statements, stop } = recordStatements();
    try {
      // Eight pages of one window in four batches of two.
      const summary = await runSync(store, new FakeConsoleClient(history()), {
        ...options,
        batchRecords: 2 * PAGE,
      });
      expect(summary).toMatchObject({ outcome: "ok", inserted: PAGE * PAGES });
    } finally {
      stop();
    }
    const matching = (pattern: RegExp) => statements.filter((text) => pattern.test(text)).length;
    // The window's progress once per batch (its last page), the chain head with the batch's known ids.
    expect(matching(/^UPDATE sync_windows/)).toBe(PAGES / 2);
    expect(matching(/ORDER BY seq DESC LIMIT 1\)\s+UNION ALL[\s\S]*= ANY\(/)).toBe(PAGES / 2);
    expect(matching(/^SELECT id, seq, record_hash FROM audit_logs WHERE id = ANY/)).toBe(0);
    // Each batch's transaction, statement by statement: meta is read once (with the quarantine's end) and
    // written once; the digests are read only when created or rows were added; the first batch also sets
    // the plan's head (its time and the plan: two statements).
    const batches = transactionsOf(statements).filter((t) => t.some((text) => /UNION ALL/.test(text)));
    expect(batches.map((t) => t.length)).toEqual([12, 8, 8, 8]);
    expect(batches[1]!.map((text) => text.split(/\s/)[0])).toEqual([
      "BEGIN",
      "(SELECT",
      "SELECT",
      "INSERT",
      "UPDATE",
      "INSERT",
      "UPDATE",
      "COMMIT",
    ]);
  });
});
