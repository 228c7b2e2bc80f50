// The same audit history synced into SQLite and into PostgreSQL by the real CLI gives the same store: the
// same rows in every table (times of the run aside), the same rule diffs and entity history, the same
// hash-chain heads, and reports whose CSVs are byte-identical. The sync into PostgreSQL is spawned (end to
// end); the one into SQLite, verify and report run the CLI in this process.
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningSimulator } from "../../src/simulator/index.ts";
import { runCliInProcess } from "../helpers/inProcessCli.ts";
import { runCli } from "../helpers/runCli.ts";
import { daysAgo, simEnv, startTestSimulator } from "../helpers/simSync.ts";
import { freshDatabase } from "./cluster.ts";
import { TABLES as COPIED_TABLES, SQLITE_STORAGE_COLUMNS } from "./copyStore.ts";

/** Columns that hold when a run happened (or a process id), not what it stored: they differ by run. */
const RUN_TIME_COLUMNS = new Set([
  "first_seen_at",
  "seen_at",
  "received_at",
  "started_at",
  "finished_at",
  "updated_at",
  "checked_at",
  "acquired_at",
  "expires_at",
  "taken_at",
  "fetched_at",
  "pid",
  "params",
  "error",
]);

/** Meta keys whose values hold times of a run (the digests fold checked_at and received_at). */
const RUN_TIME_META = /^(sync_plan:|daemon\.|chain:coverage$|chain:quarantine$)/;

/** The store's tables but those of a run's own bookkeeping (runs, windows, leases): copyStore's list. */
const TABLES = COPIED_TABLES.filter((t) => !["sync_runs", "sync_windows", "leases"].includes(t));

type Row = Record<string, unknown>;

function columnsOf(sqlite: Database.Database, table: string): string[] {
  const info = sqlite.prepare(`PRAGMA table_xinfo(${table})`).all() as { name: string }[];
  return info
    .map((c) => c.name)
    .filter((name) => !RUN_TIME_COLUMNS.has(name) && !SQLITE_STORAGE_COLUMNS.has(name));
}

/** Rows as sorted JSON lines: an order both engines agree on without trusting either's ORDER BY. */
function canonical(rows: Row[]): string[] {
  return rows.map((row) => JSON.stringify(row)).sort();
}

function readSqlite(path: string): Record<string, string[]> {
  const sqlite = new Database(path, { readonly: true, fileMustExist: true });
  try {
    const out: Record<string, string[]> = {};
    for (const table of TABLES) {
      const columns = columnsOf(sqlite, table);
      out[table] = canonical(sqlite.prepare(`SELECT ${columns.join(", ")} FROM ${table}`).all() as Row[]);
    }
    return out;
  } finally {
    sqlite.close();
  }
}

async function readPg(url: string, sqlitePath: string): Promise<Record<string, string[]>> {
  const sqlite = new Database(sqlitePath, { readonly: true, fileMustExist: true });
  const client = new pg.Client({
    connectionString: url,
    // int8 as numbers, as flagtrail's own pool reads them (epoch ms, seq).
    types: {
      getTypeParser: ((oid: number, format?: "text" | "binary") =>
        oid === pg.types.builtins.INT8 ? Number : pg.types.getTypeParser(oid, format)) as never,
    },
  });
  await client.connect();
  try {
    const out: Record<string, string[]> = {};
    for (const table of TABLES) {
      const columns = columnsOf(sqlite, table);
      out[table] = canonical((await client.query<Row>(`SELECT ${columns.join(", ")} FROM ${table}`)).rows);
    }
    return out;
  } finally {
    await client.end();
    sqlite.close();
  }
}

function withoutRunTimeMeta(lines: string[]): string[] {
  return lines.filter((line) => !RUN_TIME_META.test((JSON.parse(line) as { key: string }).key));
}

describe("one history synced into SQLite and into PostgreSQL", () => {
  let sim: RunningSimulator;
  let sqlitePath: string;
  let url: string;
  const dir = mkdtempSync(join(tmpdir(), "flagtrail-same-"));

  beforeAll(async () => {
    // The demo's history in small: its seed, entity routes on, a few hundred config edits and layers.
    sim = await startTestSimulator({
      seed: 2026,
      records: 2500,
      days: 120,
      faults: { malformedRate: 0.004 },
    });
    sqlitePath = join(dir, "flagtrail.db");
    url = await freshDatabase("same");
    for (const db of [sqlitePath, url]) {
      const args = ["sync", "--since", daysAgo(125), "--concurrency", "1", "--quiet"];
      const sync =
        db === url
          ? await runCli(args, { env: simEnv(sim, db), timeoutMs: 120_000 })
          : await runCliInProcess(args, { env: simEnv(sim, db) });
      expect(sync.stderr).toBe("");
      expect(sync.code).toBe(0);
    }
  }, 240_000);
  afterAll(async () => {
    await sim?.close();
  });

  it("stores the same rows in every table, chain heads included", async () => {
    const onSqlite = readSqlite(sqlitePath);
    const onPg = await readPg(url, sqlitePath);
    expect((onSqlite.audit_logs?.length ?? 0) + (onSqlite.quarantine?.length ?? 0)).toBe(2500);
    expect(onSqlite.rule_changes?.length).toBeGreaterThan(0);
    expect(onSqlite.config_versions?.length).toBeGreaterThan(0);
    expect(onSqlite.experiment_snapshots?.length).toBeGreaterThan(0);
    expect(onSqlite.quarantine?.length).toBeGreaterThan(0);
    for (const table of TABLES) {
      const [a, b] =
        table === "meta"
          ? [withoutRunTimeMeta(onSqlite.meta ?? []), withoutRunTimeMeta(onPg.meta ?? [])]
          : [onSqlite[table], onPg[table]];
      expect(b, table).toEqual(a);
    }
  });

  it("verifies on both, and writes byte-identical reports", async () => {
    const period = ["--from", daysAgo(60), "--to", daysAgo(31)];
    const outs: string[] = [];
    for (const [name, db] of [
      ["sqlite", sqlitePath],
      ["pg", url],
    ] as const) {
      const verify = await runCliInProcess(["verify", "--db", db]);
      expect(verify.code, verify.stdout + verify.stderr).toBe(0);
      const out = join(dir, `reports-${name}`);
      const report = await runCliInProcess([
        "report",
        "--db",
        db,
        ...period,
        "--format",
        "csv,md,html",
        "--out",
        out,
      ]);
      expect(report.code, report.stderr).toBe(0);
      outs.push(out);
    }
    const [a, b] = outs as [string, string];
    const files = readdirSync(a).sort();
    expect(readdirSync(b).sort()).toEqual(files);
    expect(files.filter((f) => f.endsWith(".csv")).length).toBe(3);
    // What may differ is when things happened on this machine: the generation time, and when each
    // entity was read (the second it was read in, unlike the service's audit times). The
    // manifest records the generation time with the hashes of the files that print these.
    const withoutTime = (text: string) =>
      text
        .replaceAll("\\", "") // Markdown's escapes, so that one pattern finds the read times
        .replace(/\| Generated at \| [^|]+ \|/, "")
        .replace(/<td>Generated at<\/td><td[^>]*>[^<]*<\/td>/, "")
        // Any ISO time then (the report prints read times as audit times), the audit times included,
        // which are the same on both sides.
        .replaceAll(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{3})?[+-]\d\d:\d\d/g, "(read time)");
    for (const file of files) {
      const [x, y] = [readFileSync(join(a, file)), readFileSync(join(b, file))];
      if (file.endsWith(".csv")) expect(y.equals(x), file).toBe(true);
      else if (file.startsWith("manifest_")) {
        const strip = (bytes: Buffer) => {
          const m = JSON.parse(bytes.toString("utf8")) as { generatedAt: string; files: { name: string }[] };
          return { ...m, generatedAt: "", files: m.files.filter((f) => !/\.(md|html)$/.test(f.name)) };
        };
        expect(strip(y), file).toEqual(strip(x));
      } else {
        expect(withoutTime(y.toString("utf8")), file).toBe(withoutTime(x.toString("utf8")));
        expect(x.length).toBeGreaterThan(1000);
      }
    }
  });
});
