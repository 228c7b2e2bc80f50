// Fault injection over real HTTP: rate limits, 5xx, resets, truncated bodies, the page-size clamp,
// malformed records, mutations and head inserts — and that all of it replays from the seed.
import { afterEach, describe, expect, it } from "vitest";
import { Counters } from "../../src/simulator/counters.ts";
import { FaultEngine } from "../../src/simulator/faults.ts";
import { type RunningSimulator, type SimulatorOptions, startSimulator } from "../../src/simulator/index.ts";
import { faultsSchema } from "../../src/simulator/options.ts";
import { auditPath, call } from "./helpers.ts";

const NOW = Date.UTC(2024, 3, 15, 19);
const running: RunningSimulator[] = [];

async function sim(options: SimulatorOptions = {}): Promise<RunningSimulator> {
  const started = await startSimulator({ records: 400, seed: 9, now: NOW, ...options });
  running.push(started);
  return started;
}

afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.close()));
});

describe("rate limiting", () => {
  it("answers 429 with Retry-After once a window is full, and lets requests through when it slides", async () => {
    const s = await sim({ faults: { rateLimit: { windows: [{ limit: 3, windowMs: 10_000 }] } } });
    for (let i = 0; i < 3; i++) expect((await call(s, auditPath("limit=1"))).status).toBe(200);
    const refused = await call(s, auditPath("limit=1"));
    expect(refused.status).toBe(429);
    expect(refused.body.status).toBe(429);
    const retryAfter = Number(refused.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(10);
    expect(s.control.counters().throttled).toBe(1);
    // Control routes are never limited.
    expect((await call(s, "/_sim/counters")).status).toBe(200);
    s.control.advanceClock(10_001);
    expect((await call(s, auditPath("limit=1"))).status).toBe(200);
  });

  it("can refuse without any Retry-After, and enforces 100 per 10 s by default", async () => {
    const s = await sim({ faults: { rateLimit: { retryAfter: false } } });
    const statuses: number[] = [];
    for (let i = 0; i < 101; i++) statuses.push((await call(s, auditPath("limit=1"))).status);
    expect(statuses.slice(0, 100).every((code) => code === 200)).toBe(true);
    const last = await call(s, auditPath("limit=1"));
    expect(statuses[100]).toBe(429);
    expect(last.status).toBe(429);
    expect(last.headers.get("retry-after")).toBeNull();
    expect(s.control.counters().statuses["429"]).toBe(2);
  });

  it("applies the 900 per 15 minutes window across 10-second windows", () => {
    let now = 0;
    const engine = new FaultEngine(1, faultsSchema.parse({ rateLimit: {} }), new Counters(), () => now);
    let accepted = 0;
    for (let i = 0; i < 1000; i++) {
      if (!engine.rateLimit().limited) accepted++;
      now += 200; // 50 per 10 s: never the short window
    }
    expect(accepted).toBe(900);
  });
});

describe("transport faults", () => {
  it("sends 5xx at the configured rate with the error body", async () => {
    const s = await sim({ faults: { errorRate: 1 } });
    const reply = await call(s, auditPath(""));
    expect([500, 502, 503, 504]).toContain(reply.status);
    expect(reply.body).toMatchObject({ status: reply.status });
    expect(typeof reply.body.message).toBe("string");
    expect(s.control.counters().faults.serverError).toBe(1);
  });

  it("resets the connection", async () => {
    const s = await sim({ faults: { resetRate: 1 } });
    await expect(call(s, auditPath(""))).rejects.toThrow();
    expect(s.control.counters().faults.reset).toBe(1);
  });

  it("truncates JSON bodies under a matching Content-Length", async () => {
    const s = await sim({ faults: { truncateRate: 1 } });
    const reply = await call(s, auditPath("limit=5"));
    expect(reply.status).toBe(200);
    expect(reply.body).toBeUndefined();
    expect(reply.text.startsWith('{"message":"Audit logs listed successfully."')).toBe(true);
    expect(Number(reply.headers.get("content-length"))).toBe(Buffer.byteLength(reply.text));
    expect(() => JSON.parse(reply.text)).toThrow();
  });

  it("draws latency between the fixed delay and the jitter", () => {
    const engine = new FaultEngine(
      3,
      faultsSchema.parse({ latencyMs: 50, jitterMs: 20 }),
      new Counters(),
      () => 0,
    );
    const delays = Array.from({ length: 200 }, () => engine.forRequest().delayMs);
    expect(Math.min(...delays)).toBeGreaterThanOrEqual(50);
    expect(Math.max(...delays)).toBeLessThanOrEqual(70);
    expect(new Set(delays).size).toBeGreaterThan(5);
  });

  it("fires queued one-shot faults in order, before random ones", async () => {
    const s = await sim();
    s.control.queueFaults(["serverError", "reset", "rateLimit", "truncate"]);
    expect((await call(s, auditPath("limit=1"))).status).toBe(503);
    await expect(call(s, auditPath("limit=1"))).rejects.toThrow();
    expect((await call(s, auditPath("limit=1"))).status).toBe(429);
    expect((await call(s, auditPath("limit=1"))).body).toBeUndefined();
    expect((await call(s, auditPath("limit=1"))).status).toBe(200);
  });

  it("replays the same faults from the same seed", async () => {
    const sequence = async (seed: number) => {
      const s = await sim({ seed, faults: { errorRate: 0.4, truncateRate: 0.2 } });
      const out: string[] = [];
      for (let i = 0; i < 30; i++) {
        const reply = await call(s, auditPath("limit=2"));
        out.push(`${reply.status}:${reply.body === undefined ? "cut" : "ok"}`);
      }
      return out.join(",");
    };
    const first = await sequence(21);
    expect(await sequence(21)).toBe(first);
    expect(await sequence(22)).not.toBe(first);
    expect(first).toMatch(/50\d/);
    expect(first).toContain("cut");
  });
});

describe("data faults", () => {
  it("clamps the page size silently and says so in itemsPerPage", async () => {
    const s = await sim({ maxPageSize: 10 });
    const reply = await call(s, auditPath("limit=50&page=2"));
    expect(reply.body.data).toHaveLength(10);
    expect(reply.body.pagination).toMatchObject({ itemsPerPage: 10, pageNumber: 2 });
    expect(reply.body.pagination.nextPage).toContain("page=3&limit=10");
    expect(s.control.counters().faults.clamp).toBe(1);
  });

  it("serves the same records malformed on every read", async () => {
    const s = await sim({ faults: { malformedRate: 0.3 } });
    const read = async () => (await call(s, auditPath("limit=1000"))).body.data as Record<string, unknown>[];
    const isBroken = (r: Record<string, unknown>) =>
      !("actionType" in r) ||
      !("date" in r) ||
      typeof r.time !== "string" ||
      typeof r.changes !== "object" ||
      !Array.isArray(r.tags) ||
      typeof r.name !== "string";
    const first = await read();
    const broken = first.filter(isBroken);
    expect(broken.length).toBeGreaterThan(first.length * 0.15);
    expect(broken.length).toBeLessThan(first.length * 0.45);
    const second = await read();
    expect(second.filter(isBroken).map((r) => r.id)).toEqual(broken.map((r) => r.id));
    expect(s.control.counters().faults.malformed).toBe(broken.length * 2);
  });

  it("changes a record under its existing id while a client reads", async () => {
    const s = await sim();
    const before = (await call(s, auditPath("limit=1000"))).body.data as { id: string; changeLog: string }[];
    s.control.setFaults({ mutateRate: 1 });
    const after = (await call(s, auditPath("limit=1000"))).body.data as { id: string; changeLog: string }[];
    expect(after.map((r) => r.id)).toEqual(before.map((r) => r.id));
    const changed = after.filter((r, i) => r.changeLog !== before[i]!.changeLog);
    expect(changed).toHaveLength(1);
    expect(changed[0]!.changeLog).toMatch(/\(edited\)$/);
    expect(s.control.counters().faults.mutate).toBe(1);
  });

  it("inserts records at the head while a client pages, shifting later pages", async () => {
    const s = await sim({ faults: { headInsertRate: 1, headInsertCount: 4 } });
    const page1 = await call(s, auditPath("limit=10&page=1"));
    const page2 = await call(s, auditPath("limit=10&page=2"));
    expect(page2.body.pagination.totalItems).toBe(page1.body.pagination.totalItems + 4);
    const ids1 = page1.body.data.map((r: { id: string }) => r.id);
    const ids2 = page2.body.data.map((r: { id: string }) => r.id);
    // The four newest records pushed everything down: page 2 starts with page 1's last four.
    expect(ids2.slice(0, 4)).toEqual(ids1.slice(6));
    expect(s.control.counters().faults.headInsert).toBe(4);
  });
});
