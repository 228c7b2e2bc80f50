// A full disk says so and names what was being written (issue 27): a sync onto a small full file
// system (SQLITE_FULL), a report into one (ENOSPC), and `--db` naming a directory. The full file system
// is a 3 MB tmpfs, which needs root and mount(8): without them those tests skip, saying why. The full
// disk's runs are spawned (end to end); the directory's in this process.
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runCliInProcess } from "../helpers/inProcessCli.ts";
import { runCli } from "../helpers/runCli.ts";
import { daysAgo, simEnv, useTestSimulator } from "../helpers/simSync.ts";
import { buildScenarioStore, SCENARIO } from "../report/scenario.ts";

const startSim = useTestSimulator();
const mounted: string[] = [];

afterEach(() => {
  for (const dir of mounted.splice(0)) {
    spawnSync("umount", [dir]);
    rmSync(dir, { recursive: true, force: true });
  }
});

/** A 3 MB tmpfs with `free` bytes left, or the reason it cannot be made here. */
function smallFullDisk(free: number): { dir: string } | { why: string } {
  const dir = mkdtempSync(join(tmpdir(), "flagtrail-full-"));
  const mount = spawnSync("mount", ["-t", "tmpfs", "-o", "size=3m", "tmpfs", dir], { encoding: "utf8" });
  if (mount.status !== 0) {
    rmSync(dir, { recursive: true, force: true });
    return { why: `cannot mount a tmpfs here (${(mount.stderr || String(mount.error)).trim()})` };
  }
  mounted.push(dir);
  writeFileSync(join(dir, "filler"), Buffer.alloc(3 * 1024 * 1024 - free));
  return { dir };
}

describe("a full disk", () => {
  it("sync onto a full file system: one sentence naming the database file, exit 1", async (ctx) => {
    const disk = smallFullDisk(1024 * 1024);
    if ("why" in disk) return ctx.skip(disk.why);
    const sim = await startSim({ records: 3000, days: 30 });
    const db = join(disk.dir, "flagtrail.db");
    const result = await runCli(["sync", "--no-entities", "--quiet", "--since", daysAgo(35)], {
      env: simEnv(sim, db),
    });
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr).toBe(
      `flagtrail: No space left on device writing ${db}; free some space and run the command again.\n`,
    );
  });

  it("report into a full file system: one sentence naming the directory, exit 1", async (ctx) => {
    const disk = smallFullDisk(0);
    if ("why" in disk) return ctx.skip(disk.why);
    const store = join(mkdtempSync(join(tmpdir(), "flagtrail-full-store-")), "store.db");
    buildScenarioStore(store).close();
    const out = join(disk.dir, "reports");
    mkdirSync(out);
    const result = await runCli([
      "report",
      ...["--from", SCENARIO.from, "--to", SCENARIO.to, "--tz", SCENARIO.timeZone],
      ...["--db", store, "--out", out],
    ]);
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr).toBe(
      `flagtrail: No space left on device writing ${out}; free some space and run the command again.\n`,
    );
  });

  it("--db naming a directory says it is one, for a writer and a reader", async () => {
    const dir = mkdtempSync(join(tmpdir(), "flagtrail-dbdir-"));
    for (const args of [["sync", "--no-entities"], ["status"]]) {
      const result = await runCliInProcess([...args, "--db", dir], {
        env: { FLAGTRAIL_API_KEY: "k", FLAGTRAIL_BASE_URL: "http://127.0.0.1:9" },
      });
      expect(result.code, result.stderr).toBe(1);
      expect(result.stderr).toBe(
        `flagtrail: ${dir} is a directory, not a database file; give a file path (such as ${join(dir, "flagtrail.db")}).\n`,
      );
    }
  });
});
