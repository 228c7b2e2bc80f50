// The controls' store (src/store/controls/) on both engines: a finding and its alerts are written in one
// transaction (a failure leaves neither), re-writing never duplicates, waiver rows chain and an edit shows.
import { afterAll, describe, expect, it } from "vitest";
import { brokenWaiver, nextWaiverRow } from "../../src/controls/waivers.ts";
import { writeCheck } from "../../src/store/controls/findings.ts";
import { dueAlerts, markDelivered } from "../../src/store/controls/outbox.ts";
import { appendWaiver, readWaivers } from "../../src/store/controls/waivers.ts";
import { type AnyStore, openAnyStore } from "../../src/store/openAny.ts";
import { ENGINES, testStore } from "./engines.ts";
import { reviewFinding } from "./findingRows.ts";

const opened: AnyStore[] = [];
afterAll(async () => {
  for (const s of opened) await s.close();
});

const finding = reviewFinding;

describe.each(ENGINES)("controls store on %s", (engine) => {
  it("writes a finding and its alerts together, or neither; never twice", async () => {
    const t = await testStore(engine);
    const store = await openAnyStore(t.db);
    opened.push(store);
    const write = (at: number, failOn?: string) =>
      writeCheck(store, {
        checkedAt: at,
        periodStart: 0,
        periodEnd: at,
        lastSeq: 0,
        periodGiven: false,
        findings: [finding("a"), finding("b")],
        tickets: [{ recordId: "c", controlId: "tk", ticket: "OPS-1" }],
        alertsFor: (f) => {
          if (f.id === failOn) throw new Error("sink list unreadable");
          return [{ sink: "hook", payload: JSON.stringify({ id: f.id }) }];
        },
      });
    await expect(write(1000, "rr:b")).rejects.toThrow("sink list unreadable");
    const count = async (table: string) =>
      Number((await t.query<{ n: number }>(`SELECT count(*) AS n FROM ${table}`))[0]!.n);
    for (const table of ["control_findings", "control_outbox", "control_checks", "control_tickets"])
      expect(await count(table), table).toBe(0);

    const first = await write(2000);
    expect([...first.values()]).toEqual([2000, 2000]);
    const second = await write(3000);
    expect([...second.values()]).toEqual([2000, 2000]);
    expect(await count("control_findings")).toBe(2);
    expect(await count("control_outbox")).toBe(2);
    expect(await count("control_checks")).toBe(2);

    const due = await dueAlerts(store, 3000);
    expect(due.map((r) => r.finding_id).sort()).toEqual(["rr:a", "rr:b"]);
    await markDelivered(store, due[0]!, 3500);
    expect((await dueAlerts(store, 4000)).map((r) => r.finding_id)).toEqual([due[1]!.finding_id]);
  });

  it("chains waiver rows; an edited one is named", async () => {
    const t = await testStore(engine);
    const store = await openAnyStore(t.db);
    opened.push(store);
    for (const [i, action] of (["waive", "unwaive", "waive"] as const).entries()) {
      await appendWaiver(store, (previous) =>
        nextWaiverRow(previous, {
          finding_id: "rr:a",
          action,
          reason: `reason ${i}`,
          by_name: "Dana",
          expires: null,
          created_at: 1000 + i,
        }),
      );
    }
    const rows = await readWaivers(store);
    expect(rows.map((r) => [Number(r.seq), r.action])).toEqual([
      [1, "waive"],
      [2, "unwaive"],
      [3, "waive"],
    ]);
    expect(
      brokenWaiver(rows.map((r) => ({ ...r, seq: Number(r.seq), created_at: Number(r.created_at) }))),
    ).toBeNull();
    await t.query("UPDATE control_waivers SET by_name = 'Someone else' WHERE seq = 2");
    const broken = brokenWaiver(await readWaivers(store));
    expect(broken?.row.seq).toBe(2);
    expect(broken?.why).toBe("its content does not match its hash");
    await t.query("DELETE FROM control_waivers WHERE seq = 2");
    expect(brokenWaiver(await readWaivers(store))?.why).toMatch(/seq 3 where 2 was expected/);
  });
});
