// Benchmark of `flagtrail report`: a one-month report over a 1,000,000-record store must take under
// 2 s in bounded memory. benchReport() builds the store with direct inserts (bench-only hashes: the
// chain is not valid, the report does not need it to be), then runs the report in a child process so
// that its peak RSS is its own and not the builder's.

import { execFile } from "node:child_process";
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { checkProject } from "../src/controls/check.ts";
import { parseControlsConfig } from "../src/controls/config.ts";
import { sha256Hex } from "../src/hash.ts";
import { writeReports } from "../src/report/writeReports.ts";
import { sqliteOf } from "../src/store/connection.ts";
import { openStore } from "../src/store/open.ts";
import { closeProjectStores, openStoreProjects } from "../src/store/projectStores.ts";
import { backfillRuleDiffs } from "../src/store/ruleDiffs.ts";
import { benchReportPg } from "./reportPg.ts";

const RECORDS = Number(process.env.BENCH_REPORT_RECORDS ?? 1_000_000);
const YEAR_START = Date.UTC(2023, 0, 1);
const YEAR_MS = 365 * 86_400_000;
const MONTH = { from: "2023-06-01", to: "2023-06-30" };

const ACTIONS = [
  ...Array<string>(10).fill("gate_update"),
  ...Array<string>(6).fill("config_conditions_update"),
  ...Array<string>(4).fill("config_default_value_update"),
  ...Array<string>(4).fill("experiment_start"),
  ...Array<string>(4).fill("experiment_stopped"),
  ...Array<string>(2).fill("experiment_create"),
  "config_review_create",
  "config_review_accept",
  "experiment_review_accept",
  "config_review_reject",
  ...Array<string>(30).fill("create_dashboard"),
  ...Array<string>(20).fill("metric_edit_definition"),
];
const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
const DAYS = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];

function rule(percent: number) {
  return {
    id: "BfGswoMDcsZ4y9Le1d9O",
    groupName: "Beta users",
    percentagePass: percent,
    conditionJSON: [{ conditionType: 1, operator: 0, value: ["ios"], extraConfig: {} }],
    returnValueJSON: `{"color":"${percent > 50 ? "blue" : "red"}"}`,
    enabledEnvironments: ["staging", "production"],
  };
}

/** Fills `path` with `records` records spread evenly over 2023 (deterministic). */
export function buildStore(path: string, records = RECORDS): void {
  const store = openStore(path);
  const insert = sqliteOf(store).prepare(
    `INSERT INTO audit_logs (id, name, action_type, change_log, updated_by, updated_by_user_id,
       modifier_email, occurred_at, server_day, date_text, time_text, tags, raw, record_hash,
       seq, chain_hash, first_seen_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, ?, ?, ?, ?, 0)`,
  );
  // Bulk load: no fsync, and indexes and the FTS trigger rebuilt once at the end instead of per row.
  sqliteOf(store).pragma("synchronous = OFF");
  const deferred = sqliteOf(store)
    .prepare(
      "SELECT type, name, sql FROM sqlite_master WHERE tbl_name = 'audit_logs' AND type IN ('index', 'trigger') AND sql IS NOT NULL",
    )
    .all() as { type: string; name: string; sql: string }[];
  for (const item of deferred) sqliteOf(store).exec(`DROP ${item.type.toUpperCase()} "${item.name}"`);
  const batch = 50_000;
  for (let start = 0; start < records; start += batch) {
    sqliteOf(store).transaction(() => {
      for (let i = start; i < Math.min(records, start + batch); i++) {
        const at = YEAR_START + Math.floor((i / records) * YEAR_MS);
        const d = new Date(at);
        const action = ACTIONS[i % ACTIONS.length]!;
        const user = i % 53;
        const withRules = action === "gate_update" && i % 7 === 0;
        const changes = withRules ? { rules: { old: [rule(i % 100)], new: [rule((i + 10) % 100)] } } : {};
        const id = `B${String(i).padStart(21, "0")}`;
        const record = {
          id,
          name: `entity_${i % 2_003}`,
          changeLog: `Change ${i}`,
          actionType: action,
          date: `${DAYS[d.getUTCDay()]} ${MONTHS[d.getUTCMonth()]} ${String(d.getUTCDate()).padStart(2, "0")} ${d.getUTCFullYear()}`,
          time: `${d.toISOString().slice(11, 19)} GMT+0000 (Coordinated Universal Time)`,
          updatedBy: `User ${user}`,
          updatedByUserID: `user${String(user).padStart(16, "0")}`,
          modifierEmail: `user${user}@example.com`,
          changes,
        };
        const raw = JSON.stringify(record);
        const hash = sha256Hex(raw);
        insert.run(
          id,
          record.name,
          action,
          record.changeLog,
          record.updatedBy,
          record.updatedByUserID,
          record.modifierEmail,
          at,
          d.toISOString().slice(0, 10),
          record.date,
          record.time,
          raw,
          hash,
          i + 1,
          hash,
        );
      }
    })();
  }
  for (const item of deferred) sqliteOf(store).exec(item.sql);
  sqliteOf(store).exec("INSERT INTO audit_logs_fts (audit_logs_fts) VALUES ('rebuild')");
  store.close();
}

/**
 * The least a report can do: read the month's rows of both CSVs through the views and write each as a
 * line to /dev/null, on a fresh connection (cold page cache, as the report's). The report's time is
 * given as a ratio of this.
 */
function streamMonthBaseline(dbPath: string): number {
  const store = openStore(dbPath, { readonly: true });
  const sink = openSync("/dev/null", "w");
  try {
    const start = Date.UTC(2023, 5, 1) - 2 * 3_600_000; // Europe/Berlin, CEST
    const end = Date.UTC(2023, 6, 1) - 2 * 3_600_000;
    const started = performance.now();
    for (const view of ["experiment_state_changes", "config_edits"]) {
      const rows = sqliteOf(store)
        .prepare(
          `SELECT occurred_at, id, updated_by, updated_by_user_id, modifier_email, name, action_type, change_log,
                  rule_diff_summary FROM ${view} WHERE occurred_at >= ? AND occurred_at < ? ORDER BY occurred_at, seq`,
        )
        .raw(true)
        .iterate(start, end) as IterableIterator<unknown[]>;
      let chunk = "";
      for (const row of rows) {
        chunk += `${row.join(",")}\n`;
        if (chunk.length > 65_536) {
          writeSync(sink, chunk);
          chunk = "";
        }
      }
      writeSync(sink, chunk);
    }
    return performance.now() - started;
  } finally {
    closeSync(sink);
    store.close();
  }
}

interface ChildResult {
  /** The first backfill of the freshly built store (a synced store has its diffs already). */
  backfillMs: number;
  /** Same-run baseline: a bare SELECT of the month's config edits and state changes, to /dev/null. */
  baselineMs: number;
  reportMs: number;
  /** CPU time (user + system) of the report: less sensitive than wall time to a busy machine. */
  reportCpuMs: number;
  rssBeforeMb: number;
  peakRssMb: number;
  heapGrowthMb: number;
  rows: number;
  /** SHA-256 per CSV name (PostgreSQL's report of the same store must write the same bytes). */
  csv: Record<string, string>;
  /** `flagtrail check` of the same month: first run (every finding new), then again (all known). */
  checkMs: number;
  checkAgainMs: number;
  checkFindings: number;
}

/**
 * The record controls and completeness over the month (integrity is left out: the bench's hashes make
 * no valid chain, and verify is its own figure). No change log cites a ticket and no change is
 * reviewed, so nearly every change is a finding of several controls: check's worst case.
 */
const BENCH_CONTROLS = parseControlsConfig(
  JSON.stringify({
    controls: [
      { id: "rr", kind: "review-required", severity: "high" },
      { id: "sa", kind: "no-self-approval", severity: "high" },
      {
        id: "cw",
        kind: "change-window",
        severity: "medium",
        days: ["mon", "tue", "wed", "thu", "fri"],
        hours: "08:00-18:00",
        zone: "Europe/Berlin",
        emergencyPattern: "EMERGENCY",
      },
      { id: "tk", kind: "ticket-reference", severity: "low", pattern: "[A-Z][A-Z0-9]+-\\d+" },
      { id: "ra", kind: "restricted-actor", severity: "high", actors: ["User 7"] },
      { id: "complete", kind: "completeness", severity: "high" },
    ],
  }),
  "bench",
);

async function timeCheck(dbPath: string): Promise<{ ms: number; findings: number }> {
  const parts = await openStoreProjects(dbPath);
  try {
    const started = performance.now();
    const period = { start: Date.UTC(2023, 5, 1), end: Date.UTC(2023, 6, 1) };
    const checked = await checkProject(parts[0]!, { ...BENCH_CONTROLS }, period, Date.UTC(2023, 6, 5));
    return { ms: performance.now() - started, findings: checked.findings.length };
  } finally {
    await closeProjectStores(parts);
  }
}

/** Child-process side: one report, timed, with memory measured around it. */
async function runReportChild(dbPath: string, outDir: string): Promise<ChildResult> {
  const store = openStore(dbPath);
  const backfillStarted = performance.now();
  backfillRuleDiffs(store);
  const backfillMs = performance.now() - backfillStarted;
  store.close();
  const baselineMs = streamMonthBaseline(dbPath);
  globalThis.gc?.();
  const rssBefore = process.memoryUsage().rss;
  const heapBefore = process.memoryUsage().heapUsed;
  let heapPeak = heapBefore;
  const sampler = setInterval(() => {
    heapPeak = Math.max(heapPeak, process.memoryUsage().heapUsed);
  }, 5);
  const started = performance.now();
  const cpuBefore = process.cpuUsage();
  const result = await writeReports({
    dbPath,
    ...MONTH,
    timeZone: "Europe/Berlin",
    outDir,
    signingKey: "bench",
  });
  const reportMs = performance.now() - started;
  const cpu = process.cpuUsage(cpuBefore);
  clearInterval(sampler);
  heapPeak = Math.max(heapPeak, process.memoryUsage().heapUsed);
  const check = await timeCheck(dbPath);
  const again = await timeCheck(dbPath);
  return {
    checkMs: check.ms,
    checkAgainMs: again.ms,
    checkFindings: check.findings,
    backfillMs,
    baselineMs,
    reportMs,
    reportCpuMs: (cpu.user + cpu.system) / 1000,
    rssBeforeMb: rssBefore / 2 ** 20,
    // maxRSS is in KiB and is the process's peak so far: opening and backfilling came before.
    peakRssMb: process.resourceUsage().maxRSS / 1024,
    heapGrowthMb: (heapPeak - heapBefore) / 2 ** 20,
    rows: result.files.reduce((sum, f) => sum + f.rows, 0),
    csv: Object.fromEntries(
      result.files.filter((f) => f.name.endsWith(".csv")).map((f) => [f.name, f.sha256]),
    ),
  };
}

export async function benchReport(): Promise<Record<string, number>> {
  const dir = mkdtempSync(join(tmpdir(), "flagtrail-bench-report-"));
  const dbPath = join(dir, "bench.db");
  try {
    const buildStarted = performance.now();
    buildStore(dbPath);
    const buildMs = performance.now() - buildStarted;
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ["--expose-gc", "--import", "tsx", fileURLToPath(import.meta.url), dbPath, join(dir, "out")],
      { maxBuffer: 1 << 20 },
    );
    const child = JSON.parse(stdout.trim().split("\n").pop()!) as ChildResult;
    // The same store in PostgreSQL (issue 11); BENCH_REPORT_PG=0 leaves it out (it adds ~1.5 minutes).
    const onPg = process.env.BENCH_REPORT_PG === "0" ? {} : await benchReportPg(dbPath, child.csv);
    return {
      report_store_records: RECORDS,
      report_store_build_ms: Math.round(buildMs),
      // Same-run ratio (bench/run.ts compares ratios only): report time over a bare streaming SELECT of
      // the same month's CSV rows.
      report_vs_select_ratio: Math.round((child.reportMs / child.baselineMs) * 100) / 100,
      report_one_month_ms: Math.round(child.reportMs),
      report_select_baseline_ms: Math.round(child.baselineMs),
      report_first_backfill_ms: Math.round(child.backfillMs),
      report_one_month_cpu_ms: Math.round(child.reportCpuMs),
      report_rows_written: child.rows,
      report_rss_before_mb: Math.round(child.rssBeforeMb),
      report_peak_rss_mb: Math.round(child.peakRssMb),
      report_heap_growth_mb: Math.round(child.heapGrowthMb * 10) / 10,
      // `flagtrail check` over the same month (goal: 3 s), beside the same bare SELECT of the month.
      check_one_month_ms: Math.round(child.checkMs),
      check_vs_select_ratio: Math.round((child.checkMs / child.baselineMs) * 100) / 100,
      check_again_ms: Math.round(child.checkAgainMs),
      check_findings: child.checkFindings,
      ...onPg,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// Run directly: `node --import tsx bench/report.ts` prints the numbers; with <db> <out> it is the child.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [dbPath, outDir] = process.argv.slice(2);
  if (dbPath && outDir) {
    process.stdout.write(`${JSON.stringify(await runReportChild(dbPath, outDir))}\n`);
  } else {
    process.stdout.write(`${JSON.stringify(await benchReport(), null, 2)}\n`);
  }
}
