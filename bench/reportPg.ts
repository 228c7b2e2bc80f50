// The PostgreSQL figure of issue 11: the one-month report over the same 1,000,000 records, as a ratio of a
// plain SELECT of the month's rows (goal: under 3 s). benchReportPg() starts a throwaway cluster
// (test/pg/server.ts, the tests' own: a child process that stops the server and removes its files when
// its stdin closes, so also when this process dies), loads the SQLite bench store into it with a
// server-side COPY per table, and runs the report in a child process against the postgres:// URL.

import { execFile, spawn } from "node:child_process";
import { chmodSync, closeSync, mkdtempSync, openSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath, pathToFileURL } from "node:url";
import { promisify } from "node:util";
import Database from "better-sqlite3";
import pg from "pg";
import { writeReports } from "../src/report/writeReports.ts";
import { openPgStore } from "../src/store/pg/open.ts";

const SERVER = fileURLToPath(new URL("../test/pg/server.ts", import.meta.url));
const MONTH = { from: "2023-06-01", to: "2023-06-30" };
/** Tables the store's open fills from code (action_type_categories), or that are not the store's. */
const NOT_COPIED = new Set(["action_type_categories"]);

interface PgServer {
  url: string;
  version: string;
  stop(): Promise<void>;
}

export async function startServer(): Promise<PgServer> {
  const child = spawn(process.execPath, ["--import", "tsx", SERVER], { stdio: ["pipe", "pipe", "inherit"] });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  try {
    const first = await new Promise<string>((resolve, reject) => {
      createInterface({ input: child.stdout }).once("line", resolve);
      void exited.then(() => reject(new Error("PostgreSQL for the bench did not start")));
    });
    const { url, version } = JSON.parse(first) as { url: string; version: string };
    return {
      url,
      version,
      stop: async () => {
        child.stdin.end();
        await exited;
      },
    };
  } catch (error) {
    child.kill();
    throw error;
  }
}

/** A field of COPY's CSV format: unquoted empty is NULL, so every text is quoted (an empty one too). */
function copyField(value: unknown): string {
  if (value === null || value === undefined) return "";
  if (typeof value === "number" || typeof value === "bigint") return String(value);
  return `"${String(value).replaceAll('"', '""')}"`;
}

/** Writes a table's rows as COPY CSV to `path`; returns the row count. */
function exportTable(sqlite: Database.Database, table: string, columns: string[], path: string): number {
  const fd = openSync(path, "w", 0o644);
  let rows = 0;
  try {
    let chunk = "";
    const select = sqlite.prepare(`SELECT ${columns.map((c) => `"${c}"`).join(", ")} FROM "${table}"`);
    for (const row of select.raw(true).iterate() as IterableIterator<unknown[]>) {
      chunk += `${row.map(copyField).join(",")}\n`;
      rows += 1;
      if (chunk.length > 1 << 20) {
        writeSync(fd, chunk);
        chunk = "";
      }
    }
    writeSync(fd, chunk);
  } finally {
    closeSync(fd);
  }
  chmodSync(path, 0o644);
  return rows;
}

/**
 * Copies every non-empty table of the SQLite store into the (migrated, empty) PostgreSQL database,
 * audit_logs first (the others refer to it). Secondary indexes are dropped first and rebuilt once after,
 * then VACUUM ANALYZE: the statistics and visibility map a store that has lived a while has.
 */
export async function loadStore(sqlitePath: string, client: pg.Client, dir: string): Promise<number> {
  const sqlite = new Database(sqlitePath, { readonly: true, fileMustExist: true });
  let records = 0;
  try {
    const tables = (
      await client.query<{ table_name: string }>(
        `SELECT table_name FROM information_schema.tables
         WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'
         ORDER BY table_name <> 'audit_logs', table_name`,
      )
    ).rows.map((r) => r.table_name);
    const indexes = (
      await client.query<{ name: string; definition: string }>(
        `SELECT i.indexname AS name, i.indexdef AS definition FROM pg_indexes i
         WHERE i.schemaname = current_schema()
           AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conname = i.indexname)`,
      )
    ).rows;
    for (const index of indexes) await client.query(`DROP INDEX "${index.name}"`);
    for (const table of tables) {
      if (NOT_COPIED.has(table)) continue;
      const exists = sqlite
        .prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?")
        .get(table);
      if (!exists || !sqlite.prepare(`SELECT 1 FROM "${table}" LIMIT 1`).get()) continue;
      const columns = (
        await client.query<{ name: string }>(
          `SELECT column_name AS name FROM information_schema.columns
           WHERE table_schema = current_schema() AND table_name = $1 AND is_generated = 'NEVER'
           ORDER BY ordinal_position`,
          [table],
        )
      ).rows.map((r) => r.name);
      const path = join(dir, `${table}.csv`);
      const rows = exportTable(sqlite, table, columns, path);
      if (table === "audit_logs") records = rows;
      // Read by the server process itself (superuser; the cluster runs as `postgres`, hence 0644/0755).
      await client.query(
        `COPY "${table}" (${columns.map((c) => `"${c}"`).join(", ")}) FROM '${path}' WITH (FORMAT csv)`,
      );
      rmSync(path);
    }
    // Index builds sort in memory up to this much (the default 64 MB spills the 1M-row ones to disk).
    await client.query("SET maintenance_work_mem = '512MB'");
    for (const index of indexes) await client.query(index.definition);
    await client.query("VACUUM ANALYZE");
  } finally {
    sqlite.close();
  }
  return records;
}

interface PgChildResult {
  baselineMs: number;
  reportMs: number;
  reportCpuMs: number;
  rows: number;
  /** SHA-256 per CSV name: the same bytes as SQLite's report of the same store. */
  csv: Record<string, string>;
}

/** The month's rows of both CSVs' views, each row joined and written to /dev/null, in one read-only snapshot. */
async function selectMonthBaseline(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const sink = openSync("/dev/null", "w");
  try {
    const start = Date.UTC(2023, 5, 1) - 2 * 3_600_000; // Europe/Berlin, CEST
    const end = Date.UTC(2023, 6, 1) - 2 * 3_600_000;
    const started = performance.now();
    await client.query("BEGIN TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY");
    for (const view of ["experiment_state_changes", "config_edits"]) {
      const result = await client.query({
        text: `SELECT occurred_at, id, updated_by, updated_by_user_id, modifier_email, name, action_type, change_log,
                      rule_diff_summary FROM ${view} WHERE occurred_at >= $1 AND occurred_at < $2 ORDER BY occurred_at, seq`,
        values: [start, end],
        rowMode: "array",
      });
      let chunk = "";
      for (const row of result.rows as unknown[][]) chunk += `${row.join(",")}\n`;
      writeSync(sink, chunk);
    }
    await client.query("ROLLBACK");
    return performance.now() - started;
  } finally {
    closeSync(sink);
    await client.end();
  }
}

/** Child-process side: the baseline, then one report, timed. */
async function runPgReportChild(url: string, outDir: string): Promise<PgChildResult> {
  const baselineMs = await selectMonthBaseline(url);
  globalThis.gc?.();
  const started = performance.now();
  const cpuBefore = process.cpuUsage();
  const result = await writeReports({
    dbPath: url,
    ...MONTH,
    timeZone: "Europe/Berlin",
    outDir,
    signingKey: "bench",
  });
  const reportMs = performance.now() - started;
  const cpu = process.cpuUsage(cpuBefore);
  return {
    baselineMs,
    reportMs,
    reportCpuMs: (cpu.user + cpu.system) / 1000,
    rows: result.files.reduce((sum, f) => sum + f.rows, 0),
    csv: Object.fromEntries(
      result.files.filter((f) => f.name.endsWith(".csv")).map((f) => [f.name, f.sha256]),
    ),
  };
}

/**
 * The PostgreSQL figures for the store at `sqlitePath` (already reported on by SQLite, its rule diffs
 * backfilled); `sqliteCsv` is SQLite's CSV hashes, which PostgreSQL's must equal.
 */
export async function benchReportPg(
  sqlitePath: string,
  sqliteCsv: Record<string, string>,
): Promise<Record<string, number>> {
  // World-traversable: the server, running as `postgres`, reads the COPY files from it.
  const dir = mkdtempSync(join(tmpdir(), "flagtrail-bench-pg-"));
  chmodSync(dir, 0o755);
  const started = performance.now();
  const server = await startServer();
  try {
    const url = new URL(server.url);
    const admin = new pg.Client({ connectionString: server.url });
    await admin.connect();
    await admin.query("CREATE DATABASE flagtrail_bench");
    await admin.end();
    url.pathname = "/flagtrail_bench";
    await (await openPgStore(url.toString())).close();
    const client = new pg.Client({ connectionString: url.toString() });
    await client.connect();
    let records: number;
    try {
      records = await loadStore(sqlitePath, client, dir);
    } finally {
      await client.end();
    }
    const loadMs = performance.now() - started;
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ["--expose-gc", "--import", "tsx", fileURLToPath(import.meta.url), url.toString(), join(dir, "out")],
      { maxBuffer: 1 << 20 },
    );
    const child = JSON.parse(stdout.trim().split("\n").pop()!) as PgChildResult;
    for (const [name, sha256] of Object.entries(sqliteCsv)) {
      if (child.csv[name] !== sha256) throw new Error(`${name} differs between SQLite and PostgreSQL`);
    }
    return {
      report_pg_vs_select_ratio: Math.round((child.reportMs / child.baselineMs) * 100) / 100,
      report_pg_one_month_ms: Math.round(child.reportMs),
      report_pg_select_baseline_ms: Math.round(child.baselineMs),
      report_pg_one_month_cpu_ms: Math.round(child.reportCpuMs),
      report_pg_rows_written: child.rows,
      report_pg_store_records: records,
      report_pg_load_ms: Math.round(loadMs),
    };
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

// The child: `node --import tsx bench/reportPg.ts <postgres-url> <out>` prints its result as JSON.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [url, outDir] = process.argv.slice(2);
  if (!url || !outDir) throw new Error("usage: bench/reportPg.ts <postgres-url> <out-dir>");
  process.stdout.write(`${JSON.stringify(await runPgReportChild(url, outDir))}\n`);
}
