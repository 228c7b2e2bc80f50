// A report stopped by SIGINT/SIGTERM (Ctrl-C, a service manager) exits 1 with one sentence and leaves no
// staging directory (`.flagtrail-report-<pid>-…`) in the output directory, and no publishing lock of its
// own: the CLI stops with process.exit, which runs no finally block.
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { PUBLISH_LOCK_NAME } from "../../src/report/publishLock.ts";
import { writeReports } from "../../src/report/writeReports.ts";
import { openStore } from "../../src/store/open.ts";
import { runCli } from "../helpers/runCli.ts";
import { insertRecords, makeRecord } from "./fixtures.ts";
import { buildScenarioStore, GENERATED_AT, SCENARIO } from "./scenario.ts";

const SIGNAL_ON_CSV_WRITE = new URL("../helpers/signalOnCsvWrite.mjs", import.meta.url).href;

function stagingDirs(outDir: string): string[] {
  if (!existsSync(outDir)) return [];
  return readdirSync(outDir).filter((name) => name.startsWith(".flagtrail-report-"));
}

/** The store, the output directory and the report's arguments. */
function setUp(): { outDir: string; args: string[] } {
  const dir = mkdtempSync(join(tmpdir(), "flagtrail-report-interrupt-"));
  const dbPath = join(dir, "store.db");
  buildScenarioStore(dbPath, { ruleDiffs: true }).close();
  const outDir = join(dir, "out");
  const args = ["report", "--db", dbPath, "--out", outDir, "--from", SCENARIO.from, "--to", SCENARIO.to];
  return { outDir, args: [...args, "--tz", SCENARIO.timeZone] };
}

/** Sends `signal` to the child once `ready()` holds (polled), and records that it did. */
function signalWhen(ready: () => boolean, signal: NodeJS.Signals) {
  const state = { sent: false };
  return {
    state,
    onSpawn: (child: import("node:child_process").ChildProcess) => {
      const poll = setInterval(() => {
        if (!ready()) return;
        clearInterval(poll);
        state.sent = true;
        child.kill(signal);
      }, 20);
      child.on("exit", () => clearInterval(poll));
    },
  };
}

/** A store of `records` config edits and experiment starts over January 2024, and that month's report. */
function setUpLong(records: number): { outDir: string; args: string[] } {
  const dir = mkdtempSync(join(tmpdir(), "flagtrail-report-interrupt-"));
  const dbPath = join(dir, "store.db");
  const store = openStore(dbPath);
  const start = Date.UTC(2024, 0, 1);
  const step = Math.floor((31 * 86_400_000) / records);
  insertRecords(
    store,
    Array.from({ length: records }, (_, i) =>
      makeRecord({
        at: start + i * step,
        name: `gate_${i % 97}`,
        actionType: i % 5 === 0 ? "experiment_start" : "gate_update",
        changeLog: `Change ${i}, with a comma`,
      }),
    ),
  );
  store.close();
  const outDir = join(dir, "out");
  return {
    outDir,
    args: ["report", "--db", dbPath, "--out", outDir, "--from", "2024-01-01", "--to", "2024-01-31"],
  };
}

describe("a report stopped by a signal", () => {
  // SQLite's reads and TextFile's writes are synchronous: the report gives the event loop a turn between
  // row batches (src/report/paced.ts), so the signal stops the change CSVs' pass half-way instead of
  // after its last row. The preload signals at the pass's first write to a staged CSV.
  it("SIGINT during the change CSVs' pass: exit 1, one sentence, the pass not finished, nothing left", async () => {
    const { outDir, args } = setUpLong(20_000);
    const log = join(outDir, "..", "csv-writes.json");
    const result = await runCli(args, {
      timeoutMs: 120_000,
      nodeArgs: ["--import", SIGNAL_ON_CSV_WRITE],
      env: { FLAGTRAIL_TEST_SIGNAL: "SIGINT", FLAGTRAIL_TEST_CSV_LOG: log },
    });
    expect(result.code, JSON.stringify(result)).toBe(1);
    expect(result.stderr).toBe("flagtrail: stopped by SIGINT; anything already stored is kept.\n");
    const seen = JSON.parse(readFileSync(log, "utf8")) as { writes: number; fsyncs: number };
    // Signalled at the first write; a pass run to its end would have fsynced its three CSVs.
    expect(seen.writes).toBeGreaterThanOrEqual(1);
    expect(seen.fsyncs).toBe(0);
    // No staging directory, no file of the set: nothing that could pass for a finished report.
    expect(readdirSync(outDir)).toEqual([]);
  });

  // With every CSV staged, a signal is handled at the latest when the report waits for the publishing lock.
  it("SIGINT with its CSVs staged, waiting to publish: exit 1, one sentence, no staging directory left", async () => {
    const { outDir, args } = setUp();
    mkdirSync(outDir);
    const lock = join(outDir, PUBLISH_LOCK_NAME);
    const holder = `${process.pid}@${hostname()} other-run`;
    writeFileSync(lock, holder);
    const csvsStaged = () =>
      stagingDirs(outDir).some((staging) =>
        readdirSync(join(outDir, staging)).some(
          (name) => name.endsWith(".csv") && statSync(join(outDir, staging, name)).size > 0,
        ),
      );
    const signal = signalWhen(csvsStaged, "SIGINT");
    const result = await runCli(args, { timeoutMs: 120_000, onSpawn: signal.onSpawn });
    expect(signal.state.sent, JSON.stringify(result)).toBe(true);
    expect(result.signal).toBeNull();
    expect(result.code).toBe(1);
    expect(result.stderr).toBe("flagtrail: stopped by SIGINT; anything already stored is kept.\n");
    expect(readdirSync(outDir)).toEqual([PUBLISH_LOCK_NAME]);
  });

  it("SIGTERM while waiting for another run's publishing lock: its staging goes, the other's lock stays", async () => {
    const { outDir, args } = setUp();
    // Another run (this live process, on this host) holds the output directory's publishing lock.
    mkdirSync(outDir);
    const lock = join(outDir, PUBLISH_LOCK_NAME);
    const holder = `${process.pid}@${hostname()} other-run`;
    writeFileSync(lock, holder);
    // Every file staged: the run is past writing, waiting for the lock to publish.
    const staged = () =>
      stagingDirs(outDir).some((staging) => readdirSync(join(outDir, staging)).length >= 4);
    const signal = signalWhen(staged, "SIGTERM");
    const result = await runCli(args, { timeoutMs: 120_000, onSpawn: signal.onSpawn });
    expect(signal.state.sent).toBe(true);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe("flagtrail: stopped by SIGTERM; anything already stored is kept.\n");
    expect(readdirSync(outDir)).toEqual([PUBLISH_LOCK_NAME]);
    expect(readFileSync(lock, "utf8")).toBe(holder);
  });

  it("many reports at once in one process: one exit listener, removed when they are done", async () => {
    const store = buildScenarioStore(":memory:", { ruleDiffs: true });
    const before = process.listenerCount("exit");
    let most = before;
    const watch = setInterval(() => {
      most = Math.max(most, process.listenerCount("exit"));
    }, 1);
    try {
      const dirs = Array.from({ length: 12 }, () => mkdtempSync(join(tmpdir(), "flagtrail-many-")));
      await Promise.all(
        dirs.map((outDir) => writeReports({ store, ...SCENARIO, outDir, generatedAt: GENERATED_AT })),
      );
      // Twelve staging directories and locks at once would have been 24 listeners (node warns past 10).
      expect(most - before).toBeLessThanOrEqual(2);
      expect(process.listenerCount("exit")).toBe(before);
      for (const outDir of dirs) expect(readdirSync(outDir).filter((n) => n.startsWith("."))).toEqual([]);
    } finally {
      clearInterval(watch);
      store.close();
    }
  });
});
