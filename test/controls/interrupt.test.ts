// A check stopped by SIGINT during its reads exits 1 with one sentence, before its reads are done: on
// SQLite they are synchronous, so without turns of the event loop (src/report/paced.ts, as the report's)
// the signal waited for every read of the period and the check ran on to its end.
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openStore } from "../../src/store/open.ts";
import { SQLITE_VARIANTS } from "../../src/store/reportQueries/sqliteVariants.ts";
import { QUERIES } from "../../src/store/reportQueries.ts";
import { runCli } from "../helpers/runCli.ts";
import { insertRecords, makeRecord } from "../report/fixtures.ts";

const SIGNAL_ON_PREPARE = new URL("../helpers/signalOnPrepare.mjs", import.meta.url).href;

/** The SQLite text of a report query, as the snapshot prepares it. */
const sqliteText = (name: keyof typeof QUERIES) => SQLITE_VARIANTS[name] ?? QUERIES[name];

describe("a check stopped by a signal", () => {
  it("SIGINT as its reads begin: exit 1, one sentence, the reads not finished, nothing printed", async () => {
    const dir = mkdtempSync(join(tmpdir(), "flagtrail-check-interrupt-"));
    const db = join(dir, "store.db");
    const store = openStore(db);
    const start = Date.UTC(2024, 0, 1);
    const records = 20_000;
    const step = Math.floor((31 * 86_400_000) / records);
    insertRecords(
      store,
      Array.from({ length: records }, (_, i) =>
        makeRecord({ at: start + i * step, name: `gate_${i % 97}`, actionType: "gate_update" }),
      ),
    );
    store.close();
    const config = join(dir, "config.json");
    const controls = [
      { id: "rr", kind: "review-required", severity: "high" },
      { id: "complete", kind: "completeness", severity: "high" },
    ];
    writeFileSync(config, JSON.stringify({ controls }));
    const log = join(dir, "prepared.json");
    const args = ["check", "--db", db, "--config", config, "--from", "2024-01-01", "--to", "2024-01-31"];
    const result = await runCli(args, {
      timeoutMs: 120_000,
      nodeArgs: ["--import", SIGNAL_ON_PREPARE],
      env: {
        FLAGTRAIL_TEST_SIGNAL: "SIGINT",
        // The first of readSnapshotInputs' reads; the month's 20k changes follow, read a batch at a time.
        FLAGTRAIL_TEST_SIGNAL_SQL: sqliteText("unreviewed"),
        FLAGTRAIL_TEST_SQL_LOG: log,
      },
    });
    const seen = JSON.parse(readFileSync(log, "utf8")) as { sent: boolean; after: string[] };
    expect(seen.sent, JSON.stringify(result)).toBe(true);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe("flagtrail: stopped by SIGINT; anything already stored is kept.\n");
    expect(result.stdout).toBe("");
    // Its last read never began: stopped between two batches or reads, not after the whole pass.
    expect(seen.after).not.toContain(sqliteText("controlLastSync"));
  });
});
