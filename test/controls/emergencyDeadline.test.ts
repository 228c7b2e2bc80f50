// An emergency change outside the change window is a finding only once its post-review time is up. The
// nightly check ("since the last check") that sees it first is usually before that time and leaves it;
// the checks after it must still judge it when the time is up, though the change is before their period:
// else it is never a finding, never alerted (review h62). Each check here runs in this process with the
// clock it is given, over a store synced from the simulator, on both engines.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkProject } from "../../src/controls/check.ts";
import { parseControlsConfig } from "../../src/controls/config.ts";
import type { RunningSimulator } from "../../src/simulator/index.ts";
import { closeProjectStores, openStoreProjects, type ProjectStore } from "../../src/store/projectStores.ts";
import { runCliInProcess } from "../helpers/inProcessCli.ts";
import { daysAgo, simEnv, startTestSimulator } from "../helpers/simSync.ts";
import { ENGINES, type TestStore, testStore } from "./engines.ts";
import { ALICE } from "./plant.ts";

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const hh = (h: number) => `${String(h % 24).padStart(2, "0")}:00`;

describe.each(ENGINES)("an emergency change's post-review deadline on %s", (engine) => {
  let sim: RunningSimulator;
  let store: TestStore;
  let parts: ProjectStore[];
  let emergencyId: string;
  let config: ReturnType<typeof parseControlsConfig>;

  beforeAll(async () => {
    sim = await startTestSimulator({ records: 50, days: 5, timeZone: "UTC" });
    const at = Math.floor((sim.control.now() - 3 * HOUR) / 1000) * 1000;
    emergencyId = sim.control.append([
      { at, name: "ctl_em_late", actionType: "gate_update", actor: ALICE, changeLog: "EMERGENCY hotfix" },
    ])[0]!.id;
    // A one-hour window twelve hours away from the change: the change is outside it.
    const h = new Date(at).getUTCHours();
    const window = {
      id: "cw",
      kind: "change-window",
      severity: "medium",
      entityPattern: "^ctl_em_",
      days: ["sun", "mon", "tue", "wed", "thu", "fri", "sat"],
      hours: `${hh(h + 12)}-${hh(h + 13)}`,
      zone: "UTC",
      emergencyPattern: "EMERGENCY",
      postReviewDays: 1,
    };
    config = parseControlsConfig(JSON.stringify({ controls: [window] }), "emergency.json");
    store = await testStore(engine);
    const sync = await runCliInProcess(["sync", "--since", daysAgo(2), "--quiet", "--no-entities"], {
      env: simEnv(sim, store.db),
    });
    expect(sync.code, sync.stderr).toBe(0);
    parts = await openStoreProjects(store.db);
  });

  afterAll(async () => {
    await closeProjectStores(parts ?? []);
    await sim?.close();
  });

  it("is found by the first nightly check after its time is up, once, and alerted", async () => {
    const part = parts[0]!;
    const now = Date.now();
    const withSink = {
      ...config,
      sinks: parseControlsConfig(
        JSON.stringify({ sinks: [{ name: "pager", kind: "exec", command: "true" }] }),
        "sinks.json",
      ).sinks,
    };
    // Its review may still come: no finding yet.
    const first = await checkProject(part, withSink, null, now);
    expect(first.findings.map((f) => f.id)).toEqual([]);
    // Two days on, no review came: the next check since the last one finds it.
    const second = await checkProject(part, withSink, null, now + 2 * DAY);
    expect(second.findings.map((f) => f.id)).toEqual([`cw:${emergencyId}`]);
    const alerts = await store.query<{ finding_id: string }>("SELECT finding_id FROM control_outbox");
    expect(alerts.map((a) => a.finding_id)).toEqual([`cw:${emergencyId}`]);
    // The one after does not print it again: it was judged by the check before.
    const third = await checkProject(part, withSink, null, now + 2 * DAY + HOUR);
    expect(third.findings.map((f) => f.id)).toEqual([]);
  });
});
