// The /_sim/ control routes over real HTTP, and their guards (console key, loopback only).
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type RunningSimulator, startSimulator } from "../../src/simulator/index.ts";
import { isLoopback } from "../../src/simulator/server.ts";
import { auditPath, call } from "./helpers.ts";

const NOW = Date.UTC(2024, 3, 15, 19);
let sim: RunningSimulator;

beforeAll(async () => {
  sim = await startSimulator({ records: 300, seed: 4, now: NOW });
});
afterAll(async () => {
  await sim.close();
});
beforeEach(async () => {
  await call(sim, "/_sim/counters/reset", { method: "POST" });
  sim.control.setFaults({});
});

describe("control routes", () => {
  it("require the console key and a loopback client", async () => {
    expect((await call(sim, "/_sim/counters", { key: null })).status).toBe(401);
    expect((await call(sim, "/_sim/counters", { key: "console-wrong" })).status).toBe(401);
    expect((await call(sim, "/_sim/nothing")).status).toBe(404);
    expect(isLoopback("127.0.0.1")).toBe(true);
    expect(isLoopback("::1")).toBe(true);
    expect(isLoopback("::ffff:127.0.0.1")).toBe(true);
    expect(isLoopback("10.0.0.7")).toBe(false);
    expect(isLoopback(undefined)).toBe(false);
  });

  it("count requests per route, statuses and the last query strings, and reset them", async () => {
    await call(sim, auditPath("limit=2&actionTypes=user_login&actionTypes=gate_update"));
    await call(sim, auditPath("limit=3"));
    await call(sim, auditPath("limit=3"), { key: "console-bad" });
    const counters = (await call(sim, "/_sim/counters")).body.data;
    expect(counters.requests).toEqual({ "GET /console/v1/audit_logs": 3 });
    expect(counters.statuses).toEqual({ "200": 2, "401": 1 });
    expect(counters.lastQueries).toEqual([
      "limit=2&actionTypes=user_login&actionTypes=gate_update",
      "limit=3",
    ]);
    const reset = (await call(sim, "/_sim/counters/reset", { method: "POST" })).body.data;
    expect(reset.requests).toEqual({});
    expect(sim.control.counters().lastQueries).toEqual([]);
  });

  it("append records at the newest end, or in time order when back-dated", async () => {
    const appended = await call(sim, "/_sim/records", {
      body: {
        records: [{ name: "ctl-new", actionType: "gate_update", changeLog: "from a test", tags: ["t1"] }],
      },
    });
    expect(appended.status).toBe(200);
    const record = appended.body.data[0];
    expect(record).toMatchObject({
      name: "ctl-new",
      actionType: "gate_update",
      changeLog: "from a test",
      tags: ["t1"],
    });
    expect(record.id).toMatch(/^[A-Za-z0-9]{22}$/);
    const newest = await call(sim, auditPath("limit=1"));
    expect(newest.body.data[0]).toEqual(record);

    const at = Date.UTC(2024, 1, 20, 18, 30);
    const old = await call(sim, "/_sim/records", {
      body: { records: [{ id: "BackdatedRecord0000001", at, name: "ctl-old", actionType: "user_login" }] },
    });
    expect(old.body.data[0]).toMatchObject({ id: "BackdatedRecord0000001", date: "Tue Feb 20 2024" });
    const day = await call(sim, auditPath("startDate=2024-02-20&endDate=2024-02-20&sortOrder=asc&limit=500"));
    const ids = day.body.data.map((r: { id: string }) => r.id);
    expect(ids).toContain("BackdatedRecord0000001");
    // still sorted by time around it
    const times = day.body.data.map((r: { time: string }) => r.time.slice(0, 8));
    expect(times).toEqual([...times].sort());

    const bad = await call(sim, "/_sim/records", { body: { records: [{ name: 3 }] } });
    expect(bad.status).toBe(400);
    expect(bad.body.errors.map((e: { property: string }) => e.property)).toEqual(
      expect.arrayContaining(["records.0.name", "records.0.actionType"]),
    );
  });

  it("mutate a record under its id, and 404 for an unknown id", async () => {
    const target = (await call(sim, auditPath("limit=5"))).body.data[3];
    const mutated = await call(sim, `/_sim/records/${target.id}`, {
      body: { changeLog: "rewritten", id: "ignored" },
    });
    expect(mutated.status).toBe(200);
    expect(mutated.body.data).toEqual({ ...target, changeLog: "rewritten" });
    const again = (await call(sim, auditPath("limit=5"))).body.data[3];
    expect(again).toEqual({ ...target, changeLog: "rewritten" });
    expect((await call(sim, `/_sim/records/${target.id}`)).body.data.changeLog).toBe("rewritten");
    expect((await call(sim, "/_sim/records/NoSuchRecord", { body: { changeLog: "x" } })).status).toBe(404);
  });

  it("insert generated records at the head", async () => {
    const before = (await call(sim, auditPath("limit=1"))).body;
    const inserted = await call(sim, "/_sim/head_insert", { body: { count: 3 } });
    expect(inserted.body.data).toHaveLength(3);
    const after = (await call(sim, auditPath("limit=3"))).body;
    expect(after.pagination.totalItems).toBe(before.pagination.totalItems + 3);
    expect(new Set(after.data.map((r: { id: string }) => r.id))).toEqual(
      new Set(inserted.body.data.map((r: { id: string }) => r.id)),
    );
  });

  it("set, read and queue faults, and move the clock", async () => {
    const set = await call(sim, "/_sim/faults", { body: { errorRate: 1 } });
    expect(set.body.data.errorRate).toBe(1);
    expect((await call(sim, "/_sim/faults")).body.data.errorRate).toBe(1);
    expect((await call(sim, auditPath("limit=1"))).status).toBeGreaterThanOrEqual(500);
    await call(sim, "/_sim/faults", { body: {} });
    expect((await call(sim, auditPath("limit=1"))).status).toBe(200);
    expect((await call(sim, "/_sim/faults", { body: { errorRate: 2 } })).status).toBe(400);

    await call(sim, "/_sim/faults/queue", { body: { faults: ["serverError"] } });
    expect((await call(sim, auditPath("limit=1"))).status).toBe(503);

    const before = (await call(sim, "/_sim/state")).body.data.now;
    const moved = await call(sim, "/_sim/clock", { body: { advanceMs: 86_400_000 } });
    expect(moved.body.data.now).toBeGreaterThanOrEqual(before + 86_400_000);
  });
});
