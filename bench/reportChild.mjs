// One measurement of bench/report.ts in a process of its own, as users run flagtrail: the compiled
// dist/ (rebuilt by the parent first), no tsx, so that the peak RSS printed is the work's alone.
//   node --expose-gc bench/reportChild.mjs select <sqlite path | postgres url> <start ms> <end ms>
//   node --expose-gc bench/reportChild.mjs report <sqlite path | postgres url> <out dir> <from> <to> <zone>
// prints one JSON line: ms, cpuMs, peakRssMb (and for a report rssBeforeMb, heapGrowthMb, rows, csv).
import { closeSync, openSync, writeSync } from "node:fs";

const [mode, target, ...rest] = process.argv.slice(2);
const isPg = target.startsWith("postgres");
// The driver is loaded before the clock starts, as writeReports' module graph is.
const driver =
  mode !== "select" ? null : isPg ? (await import("pg")).default : (await import("better-sqlite3")).default;

const VIEWS = ["experiment_state_changes", "config_edits"];
const columns = `occurred_at, id, updated_by, updated_by_user_id, modifier_email, name, action_type, change_log,
  rule_diff_summary`;

/** Appends rows as comma-joined lines to /dev/null, 64 KiB at a time. */
function sink() {
  const fd = openSync("/dev/null", "w");
  let chunk = "";
  return {
    rows(rows) {
      for (const row of rows) chunk += `${row.join(",")}\n`;
      if (chunk.length > 65_536) {
        writeSync(fd, chunk);
        chunk = "";
      }
    },
    close() {
      writeSync(fd, chunk);
      closeSync(fd);
    },
  };
}

/**
 * The least a report can do: the month's rows of both CSVs' views, in the CSVs' order, each written as a
 * line to /dev/null, streamed (SQLite: a statement's iterator; PostgreSQL: a cursor, 512 rows a FETCH,
 * in one read-only snapshot), on a fresh connection.
 */
async function select(start, end) {
  const out = sink();
  const where = "WHERE occurred_at >= $1 AND occurred_at < $2 ORDER BY occurred_at, seq";
  if (isPg) {
    const client = new driver.Client({ connectionString: target });
    await client.connect();
    await client.query("BEGIN TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY");
    for (const view of VIEWS) {
      await client.query(`DECLARE month NO SCROLL CURSOR FOR SELECT ${columns} FROM ${view} ${where}`, [
        start,
        end,
      ]);
      for (;;) {
        const { rows } = await client.query({ text: "FETCH 512 FROM month", rowMode: "array" });
        out.rows(rows);
        if (rows.length < 512) break;
      }
      await client.query("CLOSE month");
    }
    await client.query("ROLLBACK");
    await client.end();
  } else {
    const db = new driver(target, { readonly: true, fileMustExist: true });
    for (const view of VIEWS) {
      const statement = db.prepare(`SELECT ${columns} FROM ${view} ${where.replaceAll(/\$\d/g, "?")}`);
      let batch = [];
      for (const row of statement.raw(true).iterate(start, end)) {
        batch.push(row);
        if (batch.length === 512) {
          out.rows(batch);
          batch = [];
        }
      }
      out.rows(batch);
    }
    db.close();
  }
  out.close();
  return {};
}

async function report(outDir, from, to, timeZone) {
  const { writeReports } = await import("../dist/report/writeReports.js");
  // What `flagtrail report` does first (src/commands/report.ts).
  (await import("../dist/commands/heap.js")).keepHeapSmall();
  globalThis.gc?.();
  const rssBefore = process.memoryUsage().rss;
  const heapBefore = process.memoryUsage().heapUsed;
  let heapPeak = heapBefore;
  const sampler = setInterval(() => {
    heapPeak = Math.max(heapPeak, process.memoryUsage().heapUsed);
  }, 5);
  const timed = await timedRun(() =>
    writeReports({ dbPath: target, from, to, timeZone, outDir, signingKey: "bench" }),
  );
  clearInterval(sampler);
  const result = timed.value;
  return {
    ms: timed.ms,
    cpuMs: timed.cpuMs,
    rssBeforeMb: rssBefore / 2 ** 20,
    heapGrowthMb: (Math.max(heapPeak, process.memoryUsage().heapUsed) - heapBefore) / 2 ** 20,
    rows: result.files.reduce((sum, f) => sum + f.rows, 0),
    csv: Object.fromEntries(
      result.files.filter((f) => f.name.endsWith(".csv")).map((f) => [f.name, f.sha256]),
    ),
  };
}

async function timedRun(work) {
  const started = performance.now();
  const cpu = process.cpuUsage();
  const value = await work();
  const used = process.cpuUsage(cpu);
  return { value, ms: performance.now() - started, cpuMs: (used.user + used.system) / 1000 };
}

let result;
if (mode === "select") {
  const timed = await timedRun(() => select(Number(rest[0]), Number(rest[1])));
  result = { ms: timed.ms, cpuMs: timed.cpuMs };
} else if (mode === "report") {
  result = await report(rest[0], rest[1], rest[2], rest[3]);
} else throw new Error(`unknown mode ${mode}`);
// maxRSS is in KiB: the process's peak, module loading included (the report's module graph is its cost).
process.stdout.write(`${JSON.stringify({ ...result, peakRssMb: process.resourceUsage().maxRSS / 1024 })}\n`);
