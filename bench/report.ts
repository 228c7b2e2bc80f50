// Benchmark of `flagtrail report`: a one-month report over a 1,000,000-record store must take under
// 2 s in bounded memory (issue 25: at most 150 MB peak RSS, the same for a week). benchReport() builds
// the store with direct inserts (bench-only hashes: the chain is not valid, the report does not need
// it to be), then runs the baseline and the reports each in a child process of its own running the
// compiled code (bench/reportChild.mjs), so that each peak RSS is the work's alone, as users run it.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { sha256Hex } from "../src/hash.ts";
import { sqliteOf } from "../src/store/connection.ts";
import { openStore } from "../src/store/open.ts";
import { backfillRuleDiffs } from "../src/store/ruleDiffs.ts";
import { timeCheck } from "./check.ts";
import { buildDist, median, runReportChild } from "./compiled.ts";
import { benchReportPg } from "./reportPg.ts";

const RECORDS = Number(process.env.BENCH_REPORT_RECORDS ?? 1_000_000);
const YEAR_START = Date.UTC(2023, 0, 1);
const YEAR_MS = 365 * 86_400_000;
const MONTH = ["2023-06-01", "2023-06-30"] as const;
const WEEK = ["2023-06-01", "2023-06-07"] as const;
const ZONE = "Europe/Berlin";

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
    `INSERT INTO audit_logs (raw_data, occurred_at, server_day, record_hash_bytes, seq, chain_hash_bytes, first_seen_at)
     VALUES (?, ?, ?, unhex(?), ?, unhex(?), 0)`,
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
        insert.run(raw, at, d.toISOString().slice(0, 10), hash, i + 1, hash);
      }
    })();
  }
  for (const item of deferred) sqliteOf(store).exec(item.sql);
  sqliteOf(store).exec("INSERT INTO audit_logs_fts (audit_logs_fts) VALUES ('rebuild')");
  store.close();
}

/** The month in Europe/Berlin (CEST) as epoch-ms bounds, for the baseline's SELECT. */
const MONTH_START = Date.UTC(2023, 5, 1) - 2 * 3_600_000;
const MONTH_END = Date.UTC(2023, 6, 1) - 2 * 3_600_000;

const round1 = (n: number) => Math.round(n * 10) / 10;
const ratio = (a: number, b: number) => Math.round((a / b) * 100) / 100;

export async function benchReport(): Promise<Record<string, number>> {
  const dir = mkdtempSync(join(tmpdir(), "flagtrail-bench-report-"));
  const dbPath = join(dir, "bench.db");
  try {
    const buildStarted = performance.now();
    buildStore(dbPath);
    const buildMs = performance.now() - buildStarted;
    // The first backfill of the freshly built store (a synced store has its diffs already), here so
    // that no measured process includes it.
    const backfillStarted = performance.now();
    const store = openStore(dbPath);
    await backfillRuleDiffs(store);
    store.close();
    const backfillMs = performance.now() - backfillStarted;
    buildDist();
    // Each in a process of its own (bench/reportChild.mjs, the compiled code): the baseline first (as
    // cold as the report after it), the month's report, and a week's, whose peak RSS should be the same.
    const select = await runReportChild(["select", dbPath, String(MONTH_START), String(MONTH_END)]);
    const monthArgs = ["report", dbPath, join(dir, "month"), ...MONTH, ZONE];
    // The month three times, the median reported: one run on a loaded 2-core machine varied by ±20%.
    const months = [await runReportChild(monthArgs)];
    const week = await runReportChild(["report", dbPath, join(dir, "week"), ...WEEK, ZONE]);
    // `flagtrail check` of the same month: first run (every finding new), then again (all known).
    const check = await timeCheck(dbPath);
    const checkAgain = await timeCheck(dbPath);
    // The same store in PostgreSQL (issue 11); BENCH_REPORT_PG=0 leaves it out (it adds ~1.5 minutes).
    // PostgreSQL's runs alternate with SQLite's next two, so that its ratio compares runs of the same minutes.
    const again = () => runReportChild(monthArgs).then((run) => void months.push(run));
    const onPg =
      process.env.BENCH_REPORT_PG === "0"
        ? await again()
            .then(again)
            .then(() => ({}))
        : await benchReportPg(dbPath, months, again);
    const month = median(months);
    return {
      report_store_records: RECORDS,
      report_store_build_ms: Math.round(buildMs),
      // Same-run ratios (bench/run.ts compares ratios only): the report over a bare streaming SELECT of
      // the same month's CSV rows, in time and in peak RSS; the month's peak RSS over a week's (flat: ~1).
      report_vs_select_ratio: ratio(month.ms, select.ms),
      report_vs_select_peak_rss_ratio: ratio(month.peakRssMb, select.peakRssMb),
      report_month_vs_week_peak_rss_ratio: ratio(month.peakRssMb, week.peakRssMb),
      report_one_month_ms: Math.round(month.ms),
      report_one_month_slowest_ms: Math.round(Math.max(...months.map((run) => run.ms))),
      report_one_month_fastest_ms: Math.round(Math.min(...months.map((run) => run.ms))),
      report_select_baseline_ms: Math.round(select.ms),
      report_one_month_cpu_ms: Math.round(month.cpuMs),
      report_select_cpu_ms: Math.round(select.cpuMs),
      report_peak_rss_mb: Math.round(month.peakRssMb),
      report_select_peak_rss_mb: Math.round(select.peakRssMb),
      report_one_week_peak_rss_mb: Math.round(week.peakRssMb),
      report_one_week_ms: Math.round(week.ms),
      report_first_backfill_ms: Math.round(backfillMs),
      report_rows_written: month.rows ?? 0,
      report_rss_before_mb: Math.round(month.rssBeforeMb ?? 0),
      report_heap_growth_mb: round1(month.heapGrowthMb ?? 0),
      check_one_month_ms: Math.round(check.ms),
      check_vs_select_ratio: ratio(check.ms, select.ms),
      check_again_ms: Math.round(checkAgain.ms),
      check_findings: check.findings,
      ...onPg,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// Run directly: `node --import tsx bench/report.ts` prints the numbers.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  process.stdout.write(`${JSON.stringify(await benchReport(), null, 2)}\n`);
}
