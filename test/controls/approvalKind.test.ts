// An approval covers changes of its own kind of entity only: an experiment's review says nothing about a
// config of the same name (the report pairs them per kind, so must the controls). Planted on a real
// simulator, synced and checked by the CLI on each engine.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningSimulator } from "../../src/simulator/index.ts";
import { runCliInProcess } from "../helpers/inProcessCli.ts";
import { daysAgo, simEnv, startTestSimulator } from "../helpers/simSync.ts";
import { ENGINES, testStore } from "./engines.ts";
import { BOB, CAROL } from "./plant.ts";

const HOUR = 3_600_000;

const CONTROLS = [
  { id: "sa", kind: "no-self-approval", severity: "high", entityPattern: "^ctl_kind_" },
  {
    id: "tk",
    kind: "ticket-reference",
    severity: "low",
    entityPattern: "^ctl_kind_",
    pattern: "[A-Z][A-Z0-9]+-\\d+",
  },
  {
    id: "cw",
    kind: "change-window",
    severity: "medium",
    entityPattern: "^ctl_kind_",
    days: ["sun", "mon", "tue", "wed", "thu", "fri", "sat"],
    hours: "08:00-18:00",
    zone: "UTC",
    emergencyPattern: "EMERGENCY",
    postReviewDays: 1,
  },
];

describe.each(ENGINES)("the record controls match an approval to changes of its kind on %s", (engine) => {
  let sim: RunningSimulator;
  let env: Record<string, string>;
  const ids: Record<string, string> = {};
  const day = Date.parse(`${daysAgo(2)}T00:00:00Z`);
  const weekday = new Date(day).toUTCString().slice(0, 3).toLowerCase();

  beforeAll(async () => {
    sim = await startTestSimulator({ records: 50, days: 10, timeZone: "UTC" });
    const add = (h: number, actionType: string, who: typeof BOB, changeLog: string) =>
      sim.control.append([
        { at: day + h * HOUR, name: "ctl_kind_checkout", actionType, actor: who, changeLog },
      ])[0]!.id;
    // An emergency config edit at night, which no config review follows…
    ids.emergency = add(2, "gate_update", BOB, "EMERGENCY fix");
    // …Carol approves Bob's experiment review (its request names JIRA-42)…
    add(9, "experiment_review_create", BOB, "Requested review Kd0000001 for JIRA-42");
    add(10, "experiment_review_accept", CAROL, "Accepted review Kd0000001 requested by Bob Okafor");
    // …then edits the config of the same name (no review of its own, no ticket) and starts the experiment.
    ids.config = add(11, "gate_update", CAROL, "tweak");
    ids.experiment = add(12, "experiment_start", CAROL, "go");
    const store = await testStore(engine);
    env = simEnv(sim, store.db, { FLAGTRAIL_CONFIG: store.config({ controls: CONTROLS }) });
    const sync = await runCliInProcess(["sync", "--since", daysAgo(4), "--quiet"], { env });
    expect(sync.stderr).toBe("");
  });

  afterAll(async () => {
    await sim?.close();
  });

  it("judges config edits without the experiment's review (self-approval, ticket, emergency), the experiment's change with it", async () => {
    const check = await runCliInProcess(
      ["check", "--from", daysAgo(3), "--to", daysAgo(1), "--format", "json"],
      { env },
    );
    expect(check.stderr).toMatch(/unwaived findings/);
    const findings = (JSON.parse(check.stdout) as { control: string; recordId: string; message: string }[])
      .map((f) => `${f.control} ${f.recordId === ids.config ? "config" : f.recordId} ${f.message}`)
      .map((line) => line.replace(ids.experiment!, "experiment").replace(ids.emergency!, "emergency"))
      .sort();
    expect(findings).toEqual([
      `cw emergency emergency change outside the change window (${weekday} 02:00 UTC) without an approved review within 1 days`,
      "sa experiment change made by the person who approved its review",
      "tk config no ticket reference in the change log or its review",
      "tk emergency no ticket reference in the change log or its review",
    ]);
  });
});
