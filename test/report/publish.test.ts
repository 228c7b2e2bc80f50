// Publishing a report set (issue 13 items 7 and 10): a run stopped at any publishing step leaves no
// manifest that contradicts the files beside it, the next run leaves no staging directory or partial
// file behind, and report directories and files are private whatever the umask.
import { spawnSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  statSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { PublishStep } from "../../src/report/publish.ts";
import { PUBLISH_LOCK_NAME } from "../../src/report/publishLock.ts";
import { writeReports } from "../../src/report/writeReports.ts";
import { openStore, type Store } from "../../src/store/open.ts";
import { verifyManifest } from "../../src/verify/manifest.ts";
import { PROJECT_ROOT } from "../helpers/runCli.ts";
import { insertSyncedRecords, makeRecord } from "./fixtures.ts";
import { buildScenarioStore, GENERATED_AT, SCENARIO } from "./scenario.ts";

const KEY = "publish-test-key";
const MANIFEST = `manifest_${SCENARIO.from}_${SCENARIO.to}_Europe-Berlin.json`;
const KILL_SCRIPT = fileURLToPath(new URL("./killDuringPublish.ts", import.meta.url));
let store: Store;

beforeEach(() => {
  store = buildScenarioStore(":memory:", { ruleDiffs: true });
});
afterEach(() => store.close());

function report(outDir: string, hook?: (step: PublishStep) => void) {
  return writeReports({
    store,
    ...SCENARIO,
    outDir,
    generatedAt: GENERATED_AT,
    signingKey: KEY,
    force: true,
    publishHook: hook,
  });
}

/** What a reader must never see: hidden leftovers of a run. */
function leftovers(dir: string): string[] {
  return readdirSync(dir).filter((name) => name.startsWith("."));
}

/** Makes a staging directory and its files look untouched since `at` (seconds), as a dead run leaves them. */
function ageStaging(dir: string, at: number): void {
  for (const name of readdirSync(dir)) utimesSync(join(dir, name), at, at);
  utimesSync(dir, at, at);
}

function hashes(files: readonly { sha256: string }[]): string[] {
  return files.map((f) => f.sha256);
}

/** Adds a state change and a config edit to the period: every file of the next set differs. */
function changeTheData(): void {
  insertSyncedRecords(store, [
    makeRecord({ at: Date.UTC(2024, 2, 30, 12), name: "checkout_flow", actionType: "experiment_stopped" }),
    makeRecord({ at: Date.UTC(2024, 2, 30, 13), name: "new_gate", actionType: "gate_update" }),
  ]);
}

describe("publishing a report set", () => {
  it("stopped before any step, leaves the old set or no manifest, never a contradicting one", async () => {
    const steps: PublishStep[] = [];
    await report(mkdtempSync(join(tmpdir(), "flagtrail-publish-steps-")), (step) => steps.push(step));
    expect(steps).toEqual([
      "remove old manifest",
      `rename experiment-state-changes_${SCENARIO.from}_${SCENARIO.to}_Europe-Berlin.csv`,
      `rename config-edits_${SCENARIO.from}_${SCENARIO.to}_Europe-Berlin.csv`,
      `rename unreviewed-changes_${SCENARIO.from}_${SCENARIO.to}_Europe-Berlin.csv`,
      `rename compliance_${SCENARIO.from}_${SCENARIO.to}_Europe-Berlin.md`,
      `rename ${MANIFEST}`,
      "remove staging",
    ]);
    const manifestStep = steps.indexOf(`rename ${MANIFEST}`);
    for (const [index, crashAt] of steps.entries()) {
      const outDir = mkdtempSync(join(tmpdir(), "flagtrail-publish-crash-"));
      const old = await report(outDir);
      // The next set differs from the old one in every file (more rows; the Markdown counts them).
      changeTheData();
      await expect(
        report(outDir, (step) => {
          if (step === crashAt) throw new Error(`crash before ${step}`);
        }),
      ).rejects.toThrow(`crash before ${crashAt}`);
      const manifestPath = join(outDir, MANIFEST);
      if (index === 0) {
        // Stopped before anything moved: the old set, whole.
        expect(hashes((await verifyManifest(manifestPath, KEY)).manifest.files)).toEqual(hashes(old.files));
      } else if (index <= manifestStep) {
        // Some files are new, some old: no manifest claims anything about them.
        expect(existsSync(manifestPath)).toBe(false);
      } else {
        expect((await verifyManifest(manifestPath, KEY)).files).toBe(4);
      }
      // A failed run removes its own staging directory.
      expect(leftovers(outDir)).toEqual([]);
      // The next run publishes the whole new set.
      const next = await report(outDir);
      const check = await verifyManifest(next.manifestPath, KEY);
      expect(hashes(check.manifest.files)).toEqual(hashes(next.files));
      expect(hashes(next.files)).not.toContain(old.files[0]!.sha256);
      expect(leftovers(outDir)).toEqual([]);
    }
  });

  it("killed (SIGKILL) between renames: no manifest, and the next run removes the dead run's staging", async () => {
    const dir = mkdtempSync(join(tmpdir(), "flagtrail-publish-kill-"));
    const dbPath = join(dir, "store.db");
    const outDir = join(dir, "out");
    store.close();
    store = buildScenarioStore(dbPath, { ruleDiffs: true });
    await report(outDir);
    changeTheData();
    store.close();
    const killAt: PublishStep = `rename config-edits_${SCENARIO.from}_${SCENARIO.to}_Europe-Berlin.csv`;
    const child = spawnSync(process.execPath, ["--import", "tsx", KILL_SCRIPT, dbPath, outDir, killAt], {
      cwd: PROJECT_ROOT,
      encoding: "utf8",
      timeout: 60_000,
    });
    expect(child.signal).toBe("SIGKILL");
    expect(existsSync(join(outDir, MANIFEST))).toBe(false);
    // Its staging directory, and its publishing lock naming it: the next run takes both over.
    const [staging, lock, ...more] = leftovers(outDir).sort();
    expect(more).toEqual([]);
    expect(lock).toBe(PUBLISH_LOCK_NAME);
    expect(readFileSync(join(outDir, PUBLISH_LOCK_NAME), "utf8")).toMatch(new RegExp(`^${child.pid}@`));
    expect(staging).toMatch(new RegExp(`^\\.flagtrail-report-${child.pid}-`));
    // Its process is gone; once it has not changed for a minute it is a dead run's.
    const old = (Date.now() - 120_000) / 1000;
    ageStaging(join(outDir, staging!), old);
    store = openStore(dbPath);
    const next = await report(outDir);
    expect(hashes((await verifyManifest(next.manifestPath, KEY)).manifest.files)).toEqual(hashes(next.files));
    expect(leftovers(outDir)).toEqual([]);
  });

  it("removes staging directories of dead runs and partial files of older versions, not a live run's", async () => {
    const outDir = mkdtempSync(join(tmpdir(), "flagtrail-publish-stale-"));
    const deadPid = spawnSync(process.execPath, ["-e", "0"]).pid!;
    const old = (Date.now() - 120_000) / 1000;
    const dead = join(outDir, `.flagtrail-report-${deadPid}-Ab12Cd`);
    mkdirSync(dead);
    writeFileSync(join(dead, `compliance_${SCENARIO.from}_${SCENARIO.to}_Europe-Berlin.md`), "half a report");
    ageStaging(dead, old);
    const partial = join(outDir, `.config-edits_${SCENARIO.from}_${SCENARIO.to}_Europe-Berlin.csv.partial`);
    writeFileSync(partial, "half a csv");
    utimesSync(partial, old, old);
    // Still running (this process), and one whose process is gone but that changed a moment ago.
    const live = join(outDir, `.flagtrail-report-${process.pid}-Live01`);
    mkdirSync(live);
    const recent = join(outDir, `.flagtrail-report-${deadPid}-Recent`);
    mkdirSync(recent);
    // A run on another machine sharing the directory (its pid means nothing here), still writing a CSV:
    // the directory has not changed for a while, the file in it has.
    const writing = join(outDir, `.flagtrail-report-${deadPid}-Writes`);
    mkdirSync(writing);
    writeFileSync(join(writing, `config-edits_${SCENARIO.from}_${SCENARIO.to}_Europe-Berlin.csv`), "rows");
    utimesSync(writing, old, old);
    // Not ours: left alone whatever its age.
    const other = join(outDir, ".notes.partial");
    writeFileSync(other, "mine");
    utimesSync(other, old, old);

    await report(outDir);
    expect(leftovers(outDir).sort()).toEqual(
      [
        ".notes.partial",
        `.flagtrail-report-${process.pid}-Live01`,
        `.flagtrail-report-${deadPid}-Recent`,
        `.flagtrail-report-${deadPid}-Writes`,
      ].sort(),
    );
    await verifyManifest(join(outDir, MANIFEST), KEY);
  });

  it("creates report directories 0700 and files 0600 under umask 000", async () => {
    const base = mkdtempSync(join(tmpdir(), "flagtrail-publish-umask-"));
    const outDir = join(base, "reports", "2024");
    const previous = process.umask(0);
    try {
      const result = await report(outDir);
      expect(statSync(join(base, "reports")).mode & 0o777).toBe(0o700);
      expect(statSync(outDir).mode & 0o777).toBe(0o700);
      for (const path of [...result.files.map((f) => f.path), result.manifestPath])
        expect(statSync(path).mode & 0o777).toBe(0o600);
      // A directory that already existed keeps the mode its owner gave it.
      const shared = join(base, "shared");
      mkdirSync(shared, { mode: 0o755 });
      await report(shared);
      expect(statSync(shared).mode & 0o777).toBe(0o755);
      expect(readdirSync(shared).map((name) => statSync(join(shared, name)).mode & 0o777)).toEqual([
        0o600, 0o600, 0o600, 0o600, 0o600,
      ]);
    } finally {
      process.umask(previous);
    }
  });
});
