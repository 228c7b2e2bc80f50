// Two checks, or two waivers, written at once on PostgreSQL (two processes' stores on one database): under
// READ COMMITTED both would read the same max id / seq and the same findings as new, and the second would
// fail on the key. A test session holds the table they end on, so that both are under way before either
// commits (it waits until both are blocked); then both must succeed, each row once. SQLite serialises
// writers with BEGIN IMMEDIATE.
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { brokenWaiver, nextWaiverRow } from "../../src/controls/waivers.ts";
import { writeCheck } from "../../src/store/controls/findings.ts";
import { appendWaiver, readWaivers } from "../../src/store/controls/waivers.ts";
import { type AnyStore, openAnyStore } from "../../src/store/openAny.ts";
import { queryOnce } from "../pg/cluster.ts";
import { type TestStore, testStore } from "./engines.ts";
import { reviewFinding } from "./findingRows.ts";

const opened: AnyStore[] = [];
afterAll(async () => {
  for (const s of opened) await s.close();
});

const finding = reviewFinding;

/** Two stores on one fresh PostgreSQL database, as two processes would open it. */
async function twoStores(): Promise<{ t: TestStore; stores: [AnyStore, AnyStore] }> {
  const t = await testStore("postgres");
  const first = await openAnyStore(t.db);
  const second = await openAnyStore(t.db);
  opened.push(first, second);
  return { t, stores: [first, second] };
}

/**
 * Runs `writes` while a session of the test holds `table` exclusively; releases it once two other sessions
 * wait on a lock (both writes under way), and returns how each write settled.
 */
async function raced<T>(url: string, table: string, writes: () => Promise<T>[]) {
  const blocker = new pg.Client({ connectionString: url });
  await blocker.connect();
  try {
    const [{ pid }] = (await blocker.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows as [
      { pid: number },
    ];
    await blocker.query("BEGIN");
    await blocker.query(`LOCK TABLE ${table} IN ACCESS EXCLUSIVE MODE`);
    const settled = Promise.allSettled(writes());
    for (let waited = 0; ; waited += 1) {
      const [row] = await queryOnce<{ n: number }>(
        url,
        `SELECT count(*)::int AS n FROM pg_stat_activity
         WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> $1`,
        [pid],
      );
      if (row!.n >= 2) break;
      if (waited > 400) throw new Error("the two writes never both waited");
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    await blocker.query("COMMIT");
    return await settled;
  } finally {
    await blocker.end();
  }
}

const reasons = (results: PromiseSettledResult<unknown>[]) =>
  results.flatMap((r) => (r.status === "rejected" ? [String(r.reason)] : []));

describe("control writes at once on postgres", () => {
  it("two checks with the same new findings: both succeed, each finding and alert stored once", async () => {
    const { t, stores } = await twoStores();
    const write = (store: AnyStore, at: number) =>
      writeCheck(store, {
        checkedAt: at,
        periodStart: 0,
        periodEnd: at,
        lastSeq: 0,
        periodGiven: false,
        findings: [finding("a"), finding("b")],
        tickets: [],
        alertsFor: (f) => [{ sink: "hook", payload: JSON.stringify({ id: f.id }) }],
      });
    const results = await raced(t.db, "control_checks", () => [
      write(stores[0], 1000),
      write(stores[1], 2000),
    ]);
    expect(reasons(results)).toEqual([]);
    const firstSeen = results.map((r) => (r.status === "fulfilled" ? [...r.value.values()] : []));
    // Whichever committed first saw the findings new; the other found them stored, first seen kept.
    expect(firstSeen[0]).toEqual(firstSeen[1]);
    const rows = (table: string, columns: string) =>
      t.query<Record<string, unknown>>(`SELECT ${columns} FROM ${table} ORDER BY 1`);
    expect(await rows("control_findings", "id")).toEqual([{ id: "rr:a" }, { id: "rr:b" }]);
    expect(await rows("control_outbox", "finding_id")).toEqual([
      { finding_id: "rr:a" },
      { finding_id: "rr:b" },
    ]);
    expect(
      (await rows("control_checks", "id, findings")).map((r) => [Number(r.id), Number(r.findings)]),
    ).toEqual([
      [1, 2],
      [2, 2],
    ]);
  });

  it("two waivers at once: both succeed, seq 1 and 2, one unbroken chain", async () => {
    const { t, stores } = await twoStores();
    const waive = (store: AnyStore, by: string) =>
      appendWaiver(store, (previous) =>
        nextWaiverRow(previous, {
          finding_id: "rr:a",
          action: "waive",
          reason: `accepted by ${by}`,
          by_name: by,
          expires: null,
          created_at: 1000,
        }),
      );
    const results = await raced(t.db, "control_waivers", () => [
      waive(stores[0], "Dana"),
      waive(stores[1], "Eli"),
    ]);
    expect(reasons(results)).toEqual([]);
    const waivers = await readWaivers(stores[0]);
    expect(waivers.map((w) => Number(w.seq))).toEqual([1, 2]);
    expect(waivers.map((w) => w.by_name).sort()).toEqual(["Dana", "Eli"]);
    expect(
      brokenWaiver(waivers.map((w) => ({ ...w, seq: Number(w.seq), created_at: Number(w.created_at) }))),
    ).toBeNull();
  });
});
