// The report's count of quarantined records of a period, on both engines: a record counts by its own date,
// or, with no readable date, when the request that returned it lay within the period's server days
// (quarantine.day_min/day_max); one returned only by a wider request may be of the period and is counted
// apart; one stored valid under the same id is listed, so not counted. The figure is the same on SQLite
// and PostgreSQL and the verdict states it beside "Complete".
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeReports } from "../../src/report/writeReports.ts";
import { type RunningSimulator, startSimulator } from "../../src/simulator/index.ts";
import { queriesOf, sql } from "../../src/store/query.ts";
import { openStore, type Store } from "../../src/store/syncStore.ts";
import { createSyncClient } from "../../src/sync/client.ts";
import { runSync } from "../../src/sync/runSync.ts";
import { freshDatabase } from "../pg/cluster.ts";

const NOW = Date.UTC(2026, 10, 20, 12, 0, 0);
const FROM = "2026-11-05";
const TO = "2026-11-15";

let sim: RunningSimulator;
const figures: Record<string, string> = {};

beforeAll(async () => {
  sim = await startSimulator({
    host: "127.0.0.1",
    port: 0,
    seed: 7,
    records: 300,
    days: 25,
    now: NOW,
    timeZone: "UTC",
    faults: { malformedRate: 0.08 },
  });
});

afterAll(async () => {
  await sim?.close();
});

interface HeldRow {
  record_id: string | null;
  raw_hash: string;
  server_day: string | null;
  day_min: string | null;
  day_max: string | null;
}

/** The count of quarantined records of FROM..TO by the rule above, computed here from the raw rows. */
function expectedOf(rows: HeldRow[], stored: Set<string>): { records: number; maybe: number } {
  const inside = new Set<string>();
  const maybe = new Set<string>();
  for (const row of rows) {
    if (row.record_id !== null && stored.has(row.record_id)) continue;
    const key = row.record_id ?? row.raw_hash;
    if (row.server_day !== null) {
      if (row.server_day >= FROM && row.server_day <= TO) inside.add(key);
    } else if (row.day_min !== null && row.day_max !== null) {
      if (row.day_min >= FROM && row.day_max <= TO) inside.add(key);
      else if (row.day_min <= TO && row.day_max >= FROM) maybe.add(key);
    }
  }
  for (const key of inside) maybe.delete(key);
  return { records: inside.size, maybe: maybe.size };
}

async function addQuarantined(store: Store, rows: [string, string | null, string, string][]): Promise<void> {
  const q = await queriesOf(store);
  for (const [id, day, min, max] of rows)
    await q.run(
      sql`INSERT INTO quarantine (record_id, raw, raw_hash, issues, received_at, server_day, day_min, day_max)
          VALUES (${id}, ${"{}"}, ${`hash-${id}`}, ${"[]"}, ${NOW}, ${day}, ${min}, ${max})`,
    );
}

describe.each(["sqlite", "postgres"] as const)("quarantined records of a period on %s", (engine) => {
  let store: Store;

  beforeAll(async () => {
    store = await openStore(
      engine === "sqlite"
        ? join(mkdtempSync(join(tmpdir(), "flagtrail-quarantined-")), "store.db")
        : await freshDatabase("quarantined"),
    );
    const client = createSyncClient(
      { baseUrl: sim.url, apiKey: sim.settings.apiKey, authHeader: sim.settings.authHeader },
      { rateLimits: [{ limit: 100_000, windowMs: 1000 }] },
    );
    const summary = await runSync(store, client, {
      since: "2026-10-28",
      now: () => NOW,
      entities: false,
      concurrency: 1,
    });
    expect(summary.outcome).toBe("ok");
    const q = await queriesOf(store);
    const storedId = (await q.get<{ id: string }>(sql`SELECT id FROM audit_logs ORDER BY seq LIMIT 1`))!.id;
    await addQuarantined(store, [
      ["undated-inside", null, "2026-11-07", "2026-11-09"],
      ["undated-wider", null, "2026-11-14", "2026-11-20"],
      ["undated-outside", null, "2026-11-16", "2026-11-18"],
      [storedId, "2026-11-10", "2026-11-10", "2026-11-10"],
    ]);
  });

  afterAll(async () => {
    await store?.close();
  });

  it("states the period's quarantined records beside the verdict and in the completeness section", async () => {
    const q = await queriesOf(store);
    const rows = await q.all<HeldRow>(
      sql`SELECT record_id, raw_hash, server_day, day_min, day_max FROM quarantine`,
    );
    const stored = new Set((await q.all<{ id: string }>(sql`SELECT id FROM audit_logs`)).map((r) => r.id));
    const expected = expectedOf(rows, stored);
    // Dated ones from the simulator's faults, and the undated one within the period added above.
    expect(expected.records).toBeGreaterThan(1);
    expect(expected.maybe).toBeGreaterThanOrEqual(1);

    const outDir = mkdtempSync(join(tmpdir(), "flagtrail-quarantined-report-"));
    await writeReports({ store, from: FROM, to: TO, outDir, formats: ["md"], generatedAt: 0 });
    const md = readFileSync(join(outDir, `compliance_${FROM}_${TO}.md`), "utf8");
    const verdict = md.split("\n").find((line) => line.startsWith("| Completeness |"))!;
    expect(verdict).toContain(
      `**Not listed**: ${expected.records} records of these days are quarantined (held but not validated, so not listed); ` +
        `${expected.maybe} quarantined ${expected.maybe === 1 ? "record" : "records"} with no readable date may be of them.`,
    );
    expect(md).toContain(`**${expected.records} quarantined records are of these server days**`);
    figures[engine] = verdict;
  });

  it.runIf(engine === "postgres")("gives the same figures as SQLite", () => {
    expect(figures.sqlite).toBeDefined();
    expect(figures.postgres).toBe(figures.sqlite);
  });
});
