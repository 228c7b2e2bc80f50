// One delivery run (the daemon's cycle, `check --notify`) reads the outbox once to learn which sinks have
// alerts due, and the waivers once; each sink then reads its own due rows under its delivery lease (a run
// that held the lease until then may have delivered them). Before, every SIEM sink (and every alert sink)
// read the whole outbox's due rows, and the waivers, again. Counted on SQLite's statements; the rows the
// real receiver got, and the outbox, checked on both engines.
import type Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { parseControlsConfig, type Sink } from "../../src/controls/config.ts";
import { checkAndDeliver } from "../../src/controls/cycle.ts";
import { nextWaiverRow } from "../../src/controls/waivers.ts";
import { sqliteOf } from "../../src/store/connection.ts";
import { type NewFinding, writeCheck } from "../../src/store/controls/findings.ts";
import { appendWaiver } from "../../src/store/controls/waivers.ts";
import type { Store } from "../../src/store/open.ts";
import { closeProjectStores, openStoreProjects, type ProjectStore } from "../../src/store/projectStores.ts";
import { type Receiver, startReceiver } from "../helpers/alertReceiver.ts";
import { ENGINES, type TestStore, testStore } from "./engines.ts";
import { alertFinding, alertPayload } from "./findingRows.ts";

const FINDINGS: NewFinding[] = [1, 2, 3].map((n) => alertFinding(n));
const SINK_NAMES = ["hook", "siem-a", "siem-b"];

/** Every statement run on the handle from now on that reads the outbox or the waivers, and its rows. */
function countReads(sqlite: Database.Database): { text: string; rows: number }[] {
  const reads: { text: string; rows: number }[] = [];
  const prepare = sqlite.prepare.bind(sqlite);
  sqlite.prepare = ((text: string) => {
    const statement = prepare(text);
    if (!/^\s*SELECT[\s\S]*FROM control_(outbox|waivers)/.test(text)) return statement;
    const all = statement.all.bind(statement);
    statement.all = ((...params: unknown[]) => {
      const rows = all(...params);
      reads.push({ text: text.replace(/\s+/g, " ").trim(), rows: rows.length });
      return rows;
    }) as typeof statement.all;
    return statement;
  }) as typeof sqlite.prepare;
  return reads;
}

describe.each(ENGINES)("one delivery run's outbox reads on %s", (engine) => {
  let store: TestStore;
  let receiver: Receiver;
  let parts: ProjectStore[] = [];

  beforeEach(async () => {
    store = await testStore(engine);
    receiver = await startReceiver("ok");
    process.env.OUTBOX_READS_SECRET = "whsec-outbox-reads";
  });

  afterEach(async () => {
    delete process.env.OUTBOX_READS_SECRET;
    await closeProjectStores(parts);
    await receiver.close();
  });

  const sinks = (): Sink[] =>
    parseControlsConfig(
      JSON.stringify({
        sinks: [
          { name: "hook", kind: "webhook", url: receiver.url, secretEnv: "OUTBOX_READS_SECRET" },
          { name: "siem-a", kind: "http", url: receiver.url, retries: 0 },
          { name: "siem-b", kind: "http", url: receiver.url, retries: 0 },
        ],
      }),
      "test.json",
    ).sinks;

  async function plant(): Promise<void> {
    const planting = await openStoreProjects(store.db);
    try {
      const { store: s } = planting[0]!;
      await writeCheck(s, {
        checkedAt: Date.now(),
        periodStart: 0,
        periodEnd: Date.now(),
        lastSeq: 0,
        periodGiven: false,
        findings: FINDINGS,
        tickets: [],
        alertsFor: (f) => SINK_NAMES.map((sink) => ({ sink, payload: alertPayload(f) })),
      });
      await appendWaiver(s, (previous) =>
        nextWaiverRow(previous, {
          finding_id: "rr:rec2",
          action: "waive",
          reason: "hotfix INC-7",
          by_name: "Dana Lee",
          expires: null,
          created_at: Date.parse("2026-11-21T08:00:00Z"),
        }),
      );
    } finally {
      await closeProjectStores(planting);
    }
  }

  it("reads which sinks wait and the waivers once, each sink its own rows; every alert arrives once", async () => {
    await plant();
    // A handle of its own: no outbox statement prepared on it before the count starts.
    parts = await openStoreProjects(store.db);
    const part = parts[0]!;
    const reads = engine === "sqlite" ? countReads(sqliteOf(part.store as Store)) : null;
    const sent = await checkAndDeliver(part, { controls: [], sinks: sinks() });
    expect(sent).toMatchObject({
      delivered: 3,
      failed: 0,
      sinks: { "siem-a": { events: 0, findings: 3 }, "siem-b": { events: 0, findings: 3 } },
    });
    // The webhook: one request per alert (its Idempotency-Key); each SIEM sink: one batch of the three.
    const keys = FINDINGS.map((f) => `default:finding:${f.id}`);
    const alerts = receiver.requests.filter((r) => r.key !== "");
    expect(alerts.map((r) => r.key)).toEqual(keys);
    const batches = receiver.requests.filter((r) => r.key === "");
    expect(batches).toHaveLength(2);
    for (const batch of batches) {
      const findings = batch.lines.map(
        (line) => JSON.parse(line) as { finding_info: { uid: string }; status_id: number },
      );
      expect(findings.map((f) => f.finding_info.uid)).toEqual(FINDINGS.map((f) => f.id));
      // The waiver in force reached the SIEM sinks too: rr:rec2 goes as suppressed (OCSF status 3).
      expect(findings.map((f) => f.status_id)).toEqual([1, 3, 1]);
    }
    const outbox = await store.query<{ sink: string; delivered_at: number | null; attempts: number }>(
      "SELECT sink, delivered_at, attempts FROM control_outbox",
    );
    expect(outbox).toHaveLength(9);
    expect(outbox.every((r) => r.delivered_at !== null && Number(r.attempts) === 1)).toBe(true);
    if (reads === null) return;
    // Which sinks wait (one read), each sink's own three rows, the waivers once: 5 reads of 3 + 9 + 1 rows.
    // Before (measured): the run's 9 due rows, then every sink all those still due (9, 6, 3) and the
    // waivers: 7 reads of 27 + 3 rows.
    const outboxReads = reads.filter((r) => r.text.includes("FROM control_outbox"));
    const waiverReads = reads.filter((r) => r.text.includes("FROM control_waivers"));
    expect(outboxReads.map((r) => r.rows)).toEqual([3, 3, 3, 3]);
    expect(waiverReads.map((r) => r.rows)).toEqual([1]);
  });
});
