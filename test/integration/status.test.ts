// `flagtrail status` on a missing database (spawned, end to end), and on a store with runs, gaps,
// quarantine and revisions (in this process).

import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { sqliteOf } from "../../src/store/connection.ts";
import { openStore } from "../../src/store/open.ts";
import { makeRecord } from "../helpers/auditRecords.ts";
import { runCliInProcess } from "../helpers/inProcessCli.ts";
import { runCli } from "../helpers/runCli.ts";
import { tempDbPath } from "../helpers/simSync.ts";
import { createRecordWriter } from "../helpers/storeFixtures.ts";

describe("flagtrail status", () => {
  it("exits 1 with a hint when there is no database", async () => {
    const result = await runCli(["status", "--db", tempDbPath()]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/No flagtrail database .* Run `flagtrail sync` first/);
  });

  it("with no --db beside the demo's store (after `npm run demo`): names it instead of sending to sync alone", async () => {
    const dir = mkdtempSync(join(tmpdir(), "flagtrail-after-demo-"));
    const bare = await runCliInProcess(["status"], { cwd: dir });
    expect(bare.code).toBe(1);
    expect(bare.stderr).toBe(
      "flagtrail: No flagtrail database at ./flagtrail.db. Run `flagtrail sync` first.\n",
    );
    openStore(join(dir, "flagtrail-demo.db")).close();
    const afterDemo = await runCliInProcess(["status"], { cwd: dir });
    expect(afterDemo.code).toBe(1);
    expect(afterDemo.stderr).toBe(
      "flagtrail: No flagtrail database at ./flagtrail.db. Run `flagtrail sync` first, or give --db ./flagtrail-demo.db to read the demo's.\n",
    );
    // A store named on purpose is not second-guessed.
    const named = await runCliInProcess(["status", "--db", join(dir, "other.db")], { cwd: dir });
    expect(named.stderr).toBe(
      `flagtrail: No flagtrail database at ${join(dir, "other.db")}. Run \`flagtrail sync\` first.\n`,
    );
  });

  it("reports records, checkpoints, runs, gaps, quarantine and mutations (text and JSON)", async () => {
    const db = tempDbPath();
    const store = openStore(db);
    const writer = createRecordWriter(store);
    const at = Date.UTC(2024, 4, 1, 10, 0, 0);
    const first = makeRecord(at);
    const second = makeRecord(at + 86_400_000);
    await writer.writePage([first, second, { id: "broken0000000000000001" }], { syncRunId: 1 });
    await writer.writePage([{ ...first, changeLog: "changed" }], { syncRunId: 1 });
    sqliteOf(store)
      .prepare(
        "INSERT INTO sync_runs (started_at, finished_at, outcome, filter_key, params, inserted) VALUES (?, ?, 'ok', 'all', '{}', 2)",
      )
      .run(at, at + 1000);
    sqliteOf(store)
      .prepare(
        "INSERT INTO checkpoints (filter_key, latest_id, latest_occurred_at, updated_at) VALUES ('all', ?, ?, ?)",
      )
      .run(second.id, at + 86_400_000, at);
    sqliteOf(store)
      .prepare(
        "INSERT INTO coverage (filter_key, day, server_total, local_count, checked_at, day_closed) VALUES ('all', '2024-05-01', 3, 1, 0, 1), ('all', '2024-05-02', 1, 1, 0, 0)",
      )
      .run();
    store.close();

    const json = await runCliInProcess(["status", "--db", db, "--json"]);
    expect(json.code).toBe(0);
    const status = JSON.parse(json.stdout);
    expect(status.records).toMatchObject({
      total: 2,
      firstServerDay: "2024-05-01",
      lastServerDay: "2024-05-02",
      firstOccurredAt: "2024-05-01T10:00:00.000Z",
    });
    expect(status.checkpoints).toEqual([expect.objectContaining({ filterKey: "all", latestId: second.id })]);
    expect(status.runs).toEqual([expect.objectContaining({ outcome: "ok", inserted: 2 })]);
    expect(status.coverage).toEqual({
      daysChecked: 2,
      daysWithGaps: 1,
      gaps: [{ filterKey: "all", day: "2024-05-01", local: 1, server: 3 }],
      daysOpen: 1,
      open: [{ filterKey: "all", day: "2024-05-02", local: 1, server: 1 }],
    });
    expect(status.quarantined.total).toBe(1);
    expect(status.quarantined.recent[0].recordId).toBe("broken0000000000000001");
    expect(status.mutated).toEqual({ records: 1, revisions: 1, recent: [{ id: first.id, revisions: 1 }] });

    const text = await runCliInProcess(["status"], { env: { FLAGTRAIL_DB: db } });
    expect(text.code).toBe(0);
    expect(text.stdout).toContain("Records: 2, 2024-05-01 .. 2024-05-02");
    expect(text.stdout).toContain("2024-05-01 [all]: 1 stored, server says 3");
    expect(text.stdout).toContain("Open days: 1 (checked before the server's day ended");
    expect(text.stdout).toContain("2024-05-02 [all]: open, 1 stored so far");
    expect(text.stdout).toContain("Quarantined records: 1");
    expect(text.stdout).toContain("Mutated records: 1 (1 revisions kept)");
    expect(text.stdout).toMatch(/#1 .* ok \[all\]/);
  });
});
