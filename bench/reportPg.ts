// The PostgreSQL figure of issue 11: the one-month report over the same 1,000,000 records, as a ratio of a
// plain SELECT of the month's rows (goal: under 3 s). benchReportPg() starts a throwaway cluster
// (test/pg/server.ts, the tests' own: a child process that stops the server and removes its files when
// its stdin closes, so also when this process dies), loads the SQLite bench store into it with a
// server-side COPY per table, and runs the report in a child process against the postgres:// URL.

import { spawn } from "node:child_process";
import { chmodSync, closeSync, mkdtempSync, openSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import pg from "pg";
import { openPgStore } from "../src/store/pg/open.ts";
import { median, type ReportChildFigures, runReportChild } from "./compiled.ts";

const SERVER = fileURLToPath(new URL("../test/pg/server.ts", import.meta.url));
const MONTH = ["2023-06-01", "2023-06-30"] as const;
/** The month in Europe/Berlin (CEST) as epoch-ms bounds, for the baseline's SELECT. */
const MONTH_START = Date.UTC(2023, 5, 1) - 2 * 3_600_000;
const MONTH_END = Date.UTC(2023, 6, 1) - 2 * 3_600_000;
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

/**
 * The PostgreSQL figures for the store at `sqlitePath` (already reported on by SQLite, its rule diffs
 * backfilled): `sqliteRuns` are SQLite's month reports (the first one's CSV hashes PostgreSQL's must
 * equal), to which `sqliteAgain` adds one.
 */
export async function benchReportPg(
  sqlitePath: string,
  sqliteRuns: readonly ReportChildFigures[],
  sqliteAgain: () => Promise<void>,
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
    // As on SQLite: the baseline, then the report, each in a process of its own running the compiled code.
    const select = await runReportChild(["select", url.toString(), String(MONTH_START), String(MONTH_END)]);
    // Three runs, each after one of SQLite's (sqliteAgain), the median compared with SQLite's median.
    const runs: ReportChildFigures[] = [];
    for (let i = 0; i < 3; i++) {
      runs.push(
        await runReportChild(["report", url.toString(), join(dir, "out"), ...MONTH, "Europe/Berlin"]),
      );
      if (i < 2) await sqliteAgain();
    }
    const child = median(runs);
    for (const [name, sha256] of Object.entries(sqliteRuns[0]?.csv ?? {})) {
      if (child.csv?.[name] !== sha256) throw new Error(`${name} differs between SQLite and PostgreSQL`);
    }
    const ratio = (a: number, b: number) => Math.round((a / b) * 100) / 100;
    return {
      report_pg_vs_select_ratio: ratio(child.ms, select.ms),
      // Issue 25: PostgreSQL's report within 1.2x of SQLite's, same store, same run.
      report_pg_vs_sqlite_ratio: ratio(child.ms, median(sqliteRuns).ms),
      report_pg_vs_select_peak_rss_ratio: ratio(child.peakRssMb, select.peakRssMb),
      report_pg_one_month_ms: Math.round(child.ms),
      report_pg_select_baseline_ms: Math.round(select.ms),
      report_pg_one_month_cpu_ms: Math.round(child.cpuMs),
      report_pg_peak_rss_mb: Math.round(child.peakRssMb),
      report_pg_select_peak_rss_mb: Math.round(select.peakRssMb),
      report_pg_rows_written: child.rows ?? 0,
      report_pg_store_records: records,
      report_pg_load_ms: Math.round(loadMs),
    };
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
