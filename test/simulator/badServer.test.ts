// The audit log's declared page-size maximum (clamp or 400) and the bad-server modes of the fault
// campaign, over real HTTP: status, content type and the exact bytes a client receives.
import { afterEach, describe, expect, it } from "vitest";
import { ENDLESS_ID_PREFIX, REPEATING_TOTAL } from "../../src/simulator/auditRoute.ts";
import { type RunningSimulator, type SimulatorOptions, startSimulator } from "../../src/simulator/index.ts";
import { HTML_BAD_GATEWAY, INVALID_REQUEST_MESSAGE, NON_JSON_OK } from "../../src/simulator/responses.ts";
import { auditPath, call } from "./helpers.ts";

const NOW = Date.UTC(2024, 3, 15, 19);
const ALL = "startDate=2023-01-01&endDate=2024-12-31";
const running: RunningSimulator[] = [];

async function sim(options: SimulatorOptions = {}): Promise<RunningSimulator> {
  const started = await startSimulator({ records: 2500, seed: 9, now: NOW, ...options });
  running.push(started);
  return started;
}

afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.close()));
});

const ids = (body: { data: { id: string }[] }) => body.data.map((r) => r.id);

describe("the declared largest page", () => {
  it("grants at most 1,000 by default and reports the granted size", async () => {
    const s = await sim();
    const reply = await call(s, auditPath(`${ALL}&limit=2000&page=2`));
    expect(reply.status).toBe(200);
    expect(reply.body.data).toHaveLength(1000);
    expect(reply.body.pagination).toMatchObject({ itemsPerPage: 1000, pageNumber: 2, totalItems: 2500 });
    expect(reply.body.pagination.nextPage).toContain("page=3&limit=1000");
    // The same records as asking for exactly the maximum; not a fault.
    const exact = await call(s, auditPath(`${ALL}&limit=1000&page=2`));
    expect(ids(reply.body)).toEqual(ids(exact.body));
    expect(s.control.counters().faults.clamp).toBe(0);
  });

  it("clamps to a custom maximum", async () => {
    const s = await sim({ maxLimit: 250 });
    const reply = await call(s, auditPath(`${ALL}&limit=251`));
    expect(reply.body.data).toHaveLength(250);
    expect(reply.body.pagination.itemsPerPage).toBe(250);
    const atMax = await call(s, auditPath(`${ALL}&limit=250`));
    expect(atMax.body.pagination.itemsPerPage).toBe(250);
  });

  it("rejects a limit above the maximum with the service's 400 body when told to", async () => {
    const s = await sim({ maxLimit: 500, overLimit: "reject" });
    const refused = await call(s, auditPath(`${ALL}&limit=501`));
    expect(refused.status).toBe(400);
    expect(refused.text).toBe(
      JSON.stringify({
        status: 400,
        message: INVALID_REQUEST_MESSAGE,
        errors: [{ property: "limit", message: "limit must not be greater than 500" }],
      }),
    );
    const granted = await call(s, auditPath(`${ALL}&limit=500`));
    expect(granted.status).toBe(200);
    expect(granted.body.data).toHaveLength(500);
  });

  it("keeps the undeclared clamp as a counted fault below the declared maximum", async () => {
    const s = await sim({ maxPageSize: 40 });
    const reply = await call(s, auditPath(`${ALL}&limit=900`));
    expect(reply.body.data).toHaveLength(40);
    expect(reply.body.pagination.itemsPerPage).toBe(40);
    expect(s.control.counters().faults.clamp).toBe(1);
    // Above the declared maximum the fault still applies to what is granted.
    const over = await call(s, auditPath(`${ALL}&limit=5000`));
    expect(over.body.data).toHaveLength(40);
  });
});

describe("bad-server modes", () => {
  it("answers a 200 whose body is not JSON", async () => {
    const s = await sim({ faults: { nonJson200Rate: 1 } });
    const reply = await call(s, auditPath("limit=5"));
    expect(reply.status).toBe(200);
    expect(reply.headers.get("content-type")).toBe("text/plain; charset=utf-8");
    expect(reply.text).toBe(NON_JSON_OK);
    expect(reply.text).toBe("OK\n");
    expect(s.control.counters().faults.nonJson200).toBe(1);
  });

  it("answers a 502 with a proxy's HTML page", async () => {
    const s = await sim({ faults: { htmlErrorRate: 1 } });
    const reply = await call(s, auditPath("limit=5"));
    expect(reply.status).toBe(502);
    expect(reply.headers.get("content-type")).toBe("text/html");
    expect(reply.text).toBe(HTML_BAD_GATEWAY);
    expect(reply.text).toContain("<title>502 Bad Gateway</title>");
    expect(s.control.counters().faults.htmlError).toBe(1);
  });

  it("answers a 200 JSON body that is not the list envelope", async () => {
    const s = await sim({ faults: { wrongEnvelope: true } });
    const reply = await call(s, auditPath(`${ALL}&limit=3`));
    expect(reply.status).toBe(200);
    expect(Object.keys(reply.body)).toEqual(["message", "results", "count"]);
    expect(reply.body.results).toHaveLength(3);
    expect(reply.body.count).toBe(2500);
    expect(reply.body.data).toBeUndefined();
    expect(reply.body.pagination).toBeUndefined();
  });

  it("inflates totalItems, and the links follow the lie", async () => {
    const s = await sim({ faults: { lyingTotal: 100 } });
    const last = await call(s, auditPath(`${ALL}&limit=500&page=5`));
    expect(last.body.data).toHaveLength(500);
    expect(last.body.pagination.totalItems).toBe(2600);
    expect(last.body.pagination.nextPage).toContain("page=6&limit=500");
    const beyond = await call(s, auditPath(`${ALL}&limit=500&page=6`));
    expect(beyond.body.data).toEqual([]);
    expect(beyond.body.pagination.totalItems).toBe(2600);
  });

  it("answers every request with a 429 without Retry-After (endless 429)", async () => {
    const s = await sim({ faults: { throttleRate: 1 } });
    for (let i = 0; i < 5; i++) {
      const reply = await call(s, auditPath("limit=5"));
      expect(reply.status).toBe(429);
      expect(reply.headers.get("retry-after")).toBeNull();
      expect(reply.text).toBe('{"status":429,"message":"Too many requests. Please try again later."}');
    }
    expect(s.control.counters().throttled).toBe(5);
    expect(s.control.counters().faults.throttle).toBe(5);
  });

  it("answers every request with a 503 (endless 503)", async () => {
    const s = await sim({ faults: { errorRate: 1, errorStatus: 503 } });
    for (let i = 0; i < 5; i++) {
      const reply = await call(s, auditPath("limit=5"));
      expect(reply.status).toBe(503);
      expect(reply.text).toBe('{"status":503,"message":"Service Unavailable"}');
    }
    expect(s.control.counters().statuses).toEqual({ "503": 5 });
  });

  it("serves page 1 for every page with totalItems 10^9 (a page that repeats forever)", async () => {
    const s = await sim({ faults: { repeatingPage: true } });
    const first = await call(s, auditPath(`${ALL}&limit=100&page=1`));
    const far = await call(s, auditPath(`${ALL}&limit=100&page=901`));
    expect(ids(far.body)).toEqual(ids(first.body));
    expect(ids(first.body)).toHaveLength(100);
    expect(far.body.pagination).toMatchObject({
      pageNumber: 901,
      itemsPerPage: 100,
      totalItems: REPEATING_TOTAL,
    });
    expect(REPEATING_TOTAL).toBe(1_000_000_000);
    expect(far.body.pagination.nextPage).toContain("page=902&limit=100");
    expect(s.control.counters().faults.repeatingPage).toBe(2);
  });

  it("serves its real records, then pages of fresh ids forever, totalItems growing a page at a time", async () => {
    const s = await sim({ faults: { endlessFreshIds: true } });
    const first = await call(s, auditPath(`${ALL}&limit=1000&page=1`));
    expect(first.body.pagination.totalItems).toBe(2500);
    expect(ids(first.body).some((id) => id.startsWith(ENDLESS_ID_PREFIX))).toBe(false);
    const third = await call(s, auditPath(`${ALL}&limit=1000&page=3`));
    expect(third.body.pagination.totalItems).toBe(4500);
    expect(ids(third.body)).toHaveLength(1000);
    expect(ids(third.body).filter((id) => id.startsWith(ENDLESS_ID_PREFIX))).toHaveLength(500);
    const far = await call(s, auditPath(`${ALL}&limit=1000&page=40`));
    expect(far.body.pagination.totalItems).toBe(2500 + 39 * 1000);
    expect(far.body.pagination.nextPage).toContain("page=41&limit=1000");
    const fresh = [...ids(third.body), ...ids(far.body)].filter((id) => id.startsWith(ENDLESS_ID_PREFIX));
    expect(new Set(fresh).size).toBe(1500);
    expect(s.control.counters().faults.endlessFreshIds).toBe(1500);
  });

  it("turns every mode on and off through /_sim/faults", async () => {
    const s = await sim();
    const set = await call(s, "/_sim/faults", {
      body: { repeatingPage: true, lyingTotal: 7, throttleRate: 0, errorStatus: 504 },
    });
    expect(set.status).toBe(200);
    expect(set.body.data).toMatchObject({ repeatingPage: true, lyingTotal: 7, errorStatus: 504 });
    const page3 = await call(s, auditPath(`${ALL}&limit=10&page=3`));
    expect(page3.body.pagination.totalItems).toBe(REPEATING_TOTAL);
    expect((await call(s, "/_sim/faults", { body: { htmlErrorRate: 1 } })).status).toBe(200);
    expect((await call(s, auditPath("limit=1"))).status).toBe(502);
    expect((await call(s, "/_sim/faults", { body: {} })).status).toBe(200);
    const clean = await call(s, auditPath(`${ALL}&limit=10&page=3`));
    expect(clean.body.pagination.totalItems).toBe(2500);
    const bad = await call(s, "/_sim/faults", { body: { errorStatus: 418 } });
    expect(bad.status).toBe(400);
  });

  it("leaves the fault sequence of existing seeds unchanged (own random stream)", async () => {
    const sequence = async (extra: SimulatorOptions["faults"]) => {
      const s = await sim({ seed: 21, faults: { errorRate: 0.4, ...extra } });
      const out: number[] = [];
      for (let i = 0; i < 20; i++) out.push((await call(s, auditPath("limit=2"))).status);
      return out;
    };
    const plain = await sequence({});
    // Bad-server draws that never fire must not shift which requests get a 5xx.
    expect(await sequence({ htmlErrorRate: 0, nonJson200Rate: 0, throttleRate: 0 })).toEqual(plain);
    expect(plain.filter((status) => status >= 500).length).toBeGreaterThan(2);
  });
});
