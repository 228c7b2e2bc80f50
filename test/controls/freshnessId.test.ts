// A stale sync is one sync-freshness finding for as long as no sync succeeds: its id holds the last
// successful sync's instant (never the check's), so every check finds the same id and it is alerted once;
// its message gives that instant as check gives every time (+00:00), which is not part of the id.
import { afterEach, describe, expect, it } from "vitest";
import { closeProjectStores, openStoreProjects } from "../../src/store/projectStores.ts";
import { runCliInProcess } from "../helpers/inProcessCli.ts";
import { ENGINES, type TestStore, testStore } from "./engines.ts";

const FINISHED = Date.UTC(2026, 0, 5, 3, 4, 5);
const ID = "fresh:sync-2026-01-05T03:04:05.000Z";
const MESSAGE = "the last successful sync finished 2026-01-05T03:04:05.000+00:00, more than 24 hours ago";

describe.each(ENGINES)("sync-freshness on %s", (engine) => {
  let store: TestStore;

  afterEach(() => {
    delete process.env.FRESHNESS_TEST_SLACK_URL;
  });

  const run = (outcome: string, finishedAt: number) =>
    store.query(
      "INSERT INTO sync_runs (started_at, finished_at, outcome, filter_key, params) VALUES (?, ?, ?, '', '{}')",
      [finishedAt - 1_000, finishedAt, outcome],
    );

  async function check(
    config: string,
  ): Promise<{ code: number; findings: { id: string; message: string }[] }> {
    const result = await runCliInProcess(["check", "--db", store.db, "--config", config, "--format", "json"]);
    return { code: result.code ?? -1, findings: JSON.parse(result.stdout) };
  }

  it("one id on every check while no sync succeeds, one alert; gone once one does", async () => {
    store = await testStore(engine);
    await closeProjectStores(await openStoreProjects(store.db));
    const config = store.config({
      controls: [{ id: "fresh", kind: "sync-freshness", severity: "high", maxAgeHours: 24 }],
      sinks: [{ name: "chat", kind: "slack", urlEnv: "FRESHNESS_TEST_SLACK_URL" }],
    });
    await run("ok", FINISHED);
    const first = await check(config);
    expect(first).toEqual({ code: 1, findings: [expect.objectContaining({ id: ID, message: MESSAGE })] });
    // Nothing changed; then a sync that failed: the last successful one is the same, so is the finding.
    expect((await check(config)).findings.map((f) => [f.id, f.message])).toEqual([[ID, MESSAGE]]);
    await run("failed", Date.now());
    expect((await check(config)).findings.map((f) => [f.id, f.message])).toEqual([[ID, MESSAGE]]);
    expect(await store.query("SELECT id FROM control_findings")).toEqual([{ id: ID }]);
    expect(await store.query("SELECT finding_id, sink FROM control_outbox")).toEqual([
      { finding_id: ID, sink: "chat" },
    ]);
    await run("ok", Date.now());
    expect(await check(config)).toEqual({ code: 0, findings: [] });
  });
});
