// `npm run bench [-- name…]`: runs each benchmark module in its own child process (so peak RSS and
// heap are its own, and one module's garbage cannot slow the next), then prints one table.
// Every module measures its own baseline in the same run and reports ratios against it: the machines
// are small and shared, so absolute figures are printed for context only, never compared to constants.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { fileURLToPath, pathToFileURL } from "node:url";

type Bench = () => Promise<Record<string, number>>;

interface BenchModule {
  /** File beside this one. */
  file: string;
  exportName: string;
  what: string;
}

const BENCHES: Record<string, BenchModule> = {
  sync: {
    file: "sync.ts",
    exportName: "benchSync",
    what: "requests of a 3-year backfill and a nightly run; 150 ms latency vs. a sequential pager; ingest vs. fetch-only, sqlite-utils and executemany; bytes per record; PostgreSQL vs. INSERT and COPY; peak RSS; writePage vs. bare INSERT",
  },
  entities: {
    file: "entityWrites.ts",
    exportName: "benchEntityWrites",
    what: "config versions stored per second by the entity pass's writer, edit links and version diffs included (200 configs × 100 versions) vs. a bare INSERT of the same rows",
  },
  simulator: {
    file: "simulator.ts",
    exportName: "benchSimulator",
    what: "1M-record generation; page 9000 vs. page 1",
  },
  report: {
    file: "report.ts",
    exportName: "benchReport",
    what: "one-month report and check (controls) over a 1M-record store, each vs. a bare SELECT of the month",
  },
  export: {
    file: "export.ts",
    exportName: "benchExport",
    what: "OCSF export events/s of 50k records (1M with --scale full) vs. the same rows as plain JSON lines; raw; peak heap",
  },
  startup: {
    file: "startup.ts",
    exportName: "benchStartup",
    what: "flagtrail --version, --help, status --help, status of an empty store (compiled dist/, rebuilt first) vs. node -e 0",
  },
};

const RESULT_PREFIX = "BENCH_RESULT ";
const here = (file: string) => fileURLToPath(new URL(file, import.meta.url));

/** Child side: run one benchmark and print its figures on a marked line. */
async function runChild(name: string): Promise<void> {
  const spec = BENCHES[name];
  if (!spec) throw new Error(`unknown benchmark ${name}`);
  const module = (await import(pathToFileURL(here(spec.file)).href)) as Record<string, unknown>;
  const bench = module[spec.exportName];
  if (typeof bench !== "function") throw new Error(`${spec.file} does not export ${spec.exportName}()`);
  const figures = await (bench as Bench)();
  process.stdout.write(`\n${RESULT_PREFIX}${JSON.stringify(figures)}\n`);
}

interface Outcome {
  name: string;
  seconds: number;
  figures?: Record<string, number>;
  error?: string;
}

function runInChild(name: string): Promise<Outcome> {
  const started = performance.now();
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      ["--expose-gc", "--import", "tsx", here("run.ts"), "--child", name],
      { stdio: ["ignore", "pipe", "inherit"] },
    );
    let stdout = "";
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk: string) => {
      stdout += chunk;
    });
    child.on("close", (code, signal) => {
      const seconds = (performance.now() - started) / 1000;
      const line = stdout.split("\n").find((l) => l.startsWith(RESULT_PREFIX));
      // Anything else the benchmark printed is shown, not lost.
      const other = stdout
        .split("\n")
        .filter((l) => l.trim() !== "" && !l.startsWith(RESULT_PREFIX))
        .join("\n");
      if (other !== "") process.stdout.write(`[${name}] ${other}\n`);
      if (code === 0 && line) {
        resolve({ name, seconds, figures: JSON.parse(line.slice(RESULT_PREFIX.length)) });
      } else {
        resolve({ name, seconds, error: `exited with ${signal ?? code}` });
      }
    });
  });
}

/** Modules name their ratios `…_ratio` or `…Ratio` (not just "contains ratio": generationMs). */
function isRatio(key: string): boolean {
  return /ratio$/i.test(key);
}

function formatValue(key: string, value: number): string {
  if (isRatio(key)) return `${value.toFixed(2)}×`;
  if (!Number.isFinite(value)) return String(value);
  if (Number.isInteger(value)) return value.toLocaleString("en-US");
  return value.toFixed(Math.abs(value) >= 100 ? 0 : Math.abs(value) >= 1 ? 1 : 3);
}

function printTable(outcomes: readonly Outcome[]): void {
  const rows: [string, string, string][] = [["benchmark", "figure", "value"]];
  for (const outcome of outcomes) {
    if (outcome.figures === undefined) {
      rows.push([outcome.name, "FAILED", outcome.error ?? ""]);
      continue;
    }
    const entries = Object.entries(outcome.figures);
    // Ratios first: they are the figures that mean something on a shared machine.
    entries.sort(([a], [b]) => Number(isRatio(b)) - Number(isRatio(a)));
    for (const [key, value] of entries) rows.push([outcome.name, key, formatValue(key, value)]);
    rows.push([outcome.name, "(wall time s)", outcome.seconds.toFixed(1)]);
  }
  const widths = [0, 1, 2].map((i) => Math.max(...rows.map((row) => row[i]?.length ?? 0)));
  const line = (row: [string, string, string]) =>
    `${row[0].padEnd(widths[0] ?? 0)}  ${row[1].padEnd(widths[1] ?? 0)}  ${row[2].padStart(widths[2] ?? 0)}`;
  process.stdout.write(`\n${line(rows[0]!)}\n${"-".repeat(line(rows[0]!).length)}\n`);
  for (const row of rows.slice(1)) process.stdout.write(`${line(row)}\n`);
}

async function main(args: string[]): Promise<number> {
  if (args[0] === "--child" && args[1]) {
    await runChild(args[1]);
    return 0;
  }
  // `--scale full`: the 1,000,000-record figures (children read BENCH_SCALE).
  const scaleAt = args.indexOf("--scale");
  if (scaleAt >= 0) {
    process.env.BENCH_SCALE = args[scaleAt + 1] ?? "";
    args.splice(scaleAt, 2);
  }
  const unknown = args.filter((name) => !(name in BENCHES));
  if (unknown.length > 0) {
    process.stderr.write(
      `Unknown benchmark(s): ${unknown.join(", ")}. Known: ${Object.keys(BENCHES).join(", ")}\n`,
    );
    return 2;
  }
  const selected = args.length > 0 ? args : Object.keys(BENCHES);
  const cpuInfo = cpus();
  process.stdout.write(
    `flagtrail bench: node ${process.version}, ${cpuInfo.length} CPU(s) ${cpuInfo[0]?.model ?? ""}, load ${loadavg()
      .map((l) => l.toFixed(2))
      .join(" ")}\n`,
  );
  const outcomes: Outcome[] = [];
  for (const name of selected) {
    const spec = BENCHES[name]!;
    if (!existsSync(here(spec.file))) {
      process.stdout.write(`- ${name}: skipped, bench/${spec.file} is not there\n`);
      continue;
    }
    process.stdout.write(`- ${name}: ${spec.what} …\n`);
    outcomes.push(await runInChild(name));
  }
  printTable(outcomes);
  return outcomes.some((o) => o.error !== undefined) ? 1 : 0;
}

process.exitCode = await main(process.argv.slice(2));
