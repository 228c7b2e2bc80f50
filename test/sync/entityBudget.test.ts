// Issue 25: the entity pass spends at most a budget of requests, the rest is a backlog that later runs
// drain to the same entity rows as an unbudgeted sync, and status and the report say what is pending.
// Request counts are the simulator's own (what really reached it), not the client's.
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { VERSIONED_CONFIG_EDITS } from "../../src/api/entityActions.ts";
import { formatStatus } from "../../src/commands/statusText.ts";
import { readStatus } from "../../src/commands/storeStatus.ts";
import { writeReports } from "../../src/report/writeReports.ts";
import type { RunningSimulator } from "../../src/simulator/index.ts";
import { sqliteOf } from "../../src/store/connection.ts";
import { openStore, type Store } from "../../src/store/open.ts";
import type { SyncOptions } from "../../src/sync/runSync.ts";
import { startTestSimulator, syncCountingRequests } from "../helpers/simSync.ts";

const NOW = Date.UTC(2026, 10, 20, 20, 0, 0);
const SINCE = "2026-09-01";
const UNTIL = "2026-11-21";
const AUDIT_PATH = "GET /console/v1/audit_logs";

let sim: RunningSimulator;
const stores: Store[] = [];

beforeAll(async () => {
  // At least 99 dynamic configs with versioned edits (121) and 5 layers, against 7 audit log pages: a
  // project that keeps many configs (configRate 8) has them in 4,000 records, where the default mix
  // took 25,000 (two syncs of which were most of this file's time).
  sim = await startTestSimulator({ records: 4_000, days: 60, seed: 11, now: NOW, configRate: 8 });
});

afterAll(async () => {
  for (const store of stores) store.close();
  await sim?.close();
});

function tempStore(): Store {
  const store = openStore(join(mkdtempSync(join(tmpdir(), "flagtrail-budget-")), "flagtrail.db"));
  stores.push(store);
  return store;
}

/** A sync in this process, and the requests the simulator received for it: audit log pages and entity reads. */
async function syncOnce(store: Store, options: SyncOptions, at: number) {
  const { summary, requests } = await syncCountingRequests(sim, store, options, at);
  const audit = requests[AUDIT_PATH] ?? 0;
  const all = Object.values(requests).reduce((sum, n) => sum + n, 0);
  return { summary, received: { audit, entity: all - audit } };
}

// Run-specific columns (ids, chain positions, times, runs) differ between two stores by design.
const RUN_COLUMNS = new Set([
  "id",
  "entity_seq",
  "entity_chain_hash",
  "first_seen_at",
  "seen_at",
  "taken_at",
  "sync_run_id",
]);

/** The entity tables' rows without run-specific columns, sorted: what two syncs must agree on. */
function entityRows(store: Store): Record<string, string[]> {
  const db = sqliteOf(store);
  const out: Record<string, string[]> = {};
  for (const table of [
    "config_versions",
    "config_version_revisions",
    "experiment_snapshots",
    "config_edit_links",
    "config_version_changes",
  ]) {
    const rows = db.prepare(`SELECT * FROM ${table}`).all() as Record<string, unknown>[];
    out[table] = rows
      .map((row) => JSON.stringify(Object.entries(row).filter(([column]) => !RUN_COLUMNS.has(column))))
      .sort();
  }
  return out;
}

async function reportText(store: Store): Promise<string> {
  const outDir = mkdtempSync(join(tmpdir(), "flagtrail-budget-report-"));
  await writeReports({
    store,
    from: "2026-11-01",
    to: "2026-11-20",
    outDir,
    formats: ["md"],
    generatedAt: 0,
  });
  return readFileSync(join(outDir, "compliance_2026-11-01_2026-11-20.md"), "utf8");
}

describe("the entity request budget", () => {
  it("a first sync makes at most its audit requests + the budget; the backlog drains to the unbudgeted rows; status and the report say what is pending", async () => {
    // Before: no budget, every edited config and named layer read in the first sync.
    const whole = tempStore();
    const unbudgeted = await syncOnce(whole, { since: SINCE, until: UNTIL, entityBudget: 1_000_000 }, NOW);
    const configs = unbudgeted.summary.entities?.configs ?? 0;
    expect(configs).toBeGreaterThanOrEqual(99);
    expect(unbudgeted.received.entity).toBe(configs + (unbudgeted.summary.entities?.layers ?? 0));
    expect(unbudgeted.summary.entities?.pending).toBe(0);

    // After: the default budget (the audit part's requests, at least 50).
    const store = tempStore();
    const first = await syncOnce(store, { since: SINCE, until: UNTIL }, NOW);
    const budget = first.summary.entities?.budget ?? -1;
    expect(budget).toBe(Math.max(50, first.received.audit));
    expect(first.received.entity).toBe(budget);
    expect(first.summary.requests).toBe(first.received.audit + first.received.entity);
    expect(first.received.audit + first.received.entity).toBeLessThanOrEqual(first.received.audit + budget);
    const pending = unbudgeted.received.entity - budget;
    expect(first.summary.entities?.pending).toBe(pending);
    // Most recently edited first: each config read is edited no earlier than any config left pending
    // (an edit: a versioned config edit, what makes a config due).
    const edits = VERSIONED_CONFIG_EDITS.map((t) => `'${t}'`).join(", ");
    const newestOf = (where: string) =>
      sqliteOf(store)
        .prepare(
          `SELECT max(a.seq) AS newest FROM audit_logs a WHERE a.action_type IN (${edits}) AND a.name IN (${where}) GROUP BY a.name`,
        )
        .pluck()
        .all() as number[];
    const readNewest = newestOf("SELECT entity_key FROM entity_fetches WHERE kind = 'config_versions'");
    const pendingNewest = newestOf("SELECT entity_key FROM entity_backlog WHERE kind = 'config_versions'");
    expect(Math.min(...readNewest)).toBeGreaterThan(Math.max(...pendingNewest));

    const status = formatStatus(await readStatus(store));
    const pendingConfigs = pendingNewest.length;
    expect(status).toContain(
      `config versions read for ${configs - pendingConfigs} of ${configs} edited configs; ${pendingConfigs} pending`,
    );
    const report = await reportText(store);
    expect(report).toContain(
      `config versions read for ${configs - pendingConfigs} of ${configs} edited configs; ${pendingConfigs} pending`,
    );
    expect(report).toContain("**Partial**");

    // Later runs (no new records) drain the backlog within their budget, then read nothing more.
    let left = pending;
    for (let run = 1; left > 0; run += 1) {
      const next = await syncOnce(store, {}, NOW + run * 60_000);
      expect(next.received.entity).toBe(Math.min(left, next.summary.entities?.budget ?? -1));
      left -= next.received.entity;
      expect(next.summary.entities?.pending).toBe(left);
    }
    const idle = await syncOnce(store, {}, NOW + 3_600_000);
    expect(idle.received.entity).toBe(0);
    expect(entityRows(store)).toEqual(entityRows(whole));
    expect(formatStatus(await readStatus(store))).toContain(
      `config versions read for ${configs} of ${configs} edited configs\n`,
    );
    expect(await reportText(store)).toContain("Nothing is pending.");
  }, 600_000);

  it("reads the backlog alone with entitiesOnly: no audit request, no limit unless one is given", async () => {
    // Budgets of 10, then 7, need a backlog of more than 7 left after the first (116 in this history).
    const store = tempStore();
    const first = await syncOnce(store, { since: SINCE, until: UNTIL, entityBudget: 10 }, NOW);
    expect(first.received.entity).toBe(10);
    const pending = first.summary.entities?.pending ?? 0;
    expect(pending).toBeGreaterThan(7);
    const some = await syncOnce(store, { entitiesOnly: true, entityBudget: 7 }, NOW + 60_000);
    expect(some.received).toEqual({ audit: 0, entity: 7 });
    const rest = await syncOnce(store, { entitiesOnly: true }, NOW + 120_000);
    expect(rest.received).toEqual({ audit: 0, entity: pending - 7 });
    expect(rest.summary.entities).toMatchObject({ budget: null, pending: 0 });
  }, 600_000);
});
