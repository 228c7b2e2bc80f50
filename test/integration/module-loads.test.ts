// Which modules each command loads: the PostgreSQL half of the store (pg, drizzle's node-postgres
// driver, src/store/pg/) only for a postgres:// store, the read commands without the sync's write path,
// the sync without undici's index and date-fns.
// Each costs start-up time and memory in every run that does not need it.
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { runCli } from "../helpers/runCli.ts";
import { daysAgo, simEnv, tempDbPath, useTestSimulator } from "../helpers/simSync.ts";

const RECORD_LOADS = fileURLToPath(new URL("../helpers/recordLoads.mjs", import.meta.url));
// The driver and src/store/pg/side.ts, the half's one entry. Not drizzle-orm/pg-core (drizzle's own
// relations.js imports part of it whichever the dialect), nor the PostgreSQL report query texts (a
// report prints both dialects' SQL).
const PG_HALF = /\/node_modules\/pg\/|\/drizzle-orm\/node-postgres\/|\/src\/store\/pg\/side\.ts$/;
const SYNC_WRITE_PATH = /\/src\/store\/syncStore\.ts|\/src\/store\/records\.ts|\/node_modules\/diff\//;
// undici's index (fetch, WebSocket, mocks: ~100 modules; the client takes its two files) and date-fns
// (only for date texts not in toDateString's form): what a sync of such records never runs.
const NOT_FOR_SYNC = /\/node_modules\/undici\/index\.js$|\/node_modules\/(@date-fns|date-fns)\//;

const startSim = useTestSimulator();

/** Runs the CLI and returns its result with the URLs of every module it loaded. */
async function loadsOf(args: readonly string[], env: Record<string, string>) {
  const log = join(mkdtempSync(join(tmpdir(), "flagtrail-loads-")), "loads.txt");
  const result = await runCli(args, {
    env: { ...env, FLAGTRAIL_TEST_LOAD_LOG: log },
    nodeArgs: ["--import", RECORD_LOADS],
  });
  const urls = readFileSync(log, "utf8").split("\n").filter(Boolean);
  return { result, urls, matching: (pattern: RegExp) => urls.filter((url) => pattern.test(url)) };
}

describe("modules a command loads", () => {
  it("on a SQLite store: never the PostgreSQL half; status and sql not the sync's write path", async () => {
    const sim = await startSim();
    const db = tempDbPath();
    const env = simEnv(sim, db);
    const sync = await loadsOf(["sync", "--since", daysAgo(30), "--no-entities", "--quiet"], env);
    expect(sync.result.code).toBe(0);
    expect(sync.matching(/\/src\/store\/syncStore\.ts/)).toHaveLength(1);
    expect(sync.matching(PG_HALF)).toEqual([]);
    expect(sync.matching(NOT_FOR_SYNC)).toEqual([]);

    const out = mkdtempSync(join(tmpdir(), "flagtrail-loads-report-"));
    const reads = [
      ["status"],
      ["sql", "SELECT count(*) FROM audit_logs"],
      ["verify"],
      ["report", "--from", daysAgo(30), "--to", daysAgo(0), "--out", out],
    ];
    for (const args of reads) {
      const run = await loadsOf(args, { FLAGTRAIL_DB: db });
      expect(run.result.code, `${args[0]}: ${run.result.stderr}`).toBe(0);
      expect(run.matching(/\/src\/store\/open\.ts/), args[0]).toHaveLength(1);
      expect(run.matching(PG_HALF), args[0]).toEqual([]);
      // status and sql, from the same run (each spawn takes a second on a loaded machine).
      if (args[0] === "status" || args[0] === "sql") {
        expect(run.matching(SYNC_WRITE_PATH), args[0]).toEqual([]);
      }
    }
  });

  it("on a postgres:// store: the PostgreSQL half, once the store is opened", async () => {
    // Nothing listens on port 1: the command fails to connect, after it loaded what a connection takes.
    const run = await loadsOf(["status"], { FLAGTRAIL_DB: "postgres://flagtrail@127.0.0.1:1/flagtrail" });
    expect(run.result.code).toBe(1);
    expect(run.matching(/\/src\/store\/pg\/side\.ts$/)).toHaveLength(1);
    expect(run.matching(/\/node_modules\/pg\//).length).toBeGreaterThan(0);
  });
});
