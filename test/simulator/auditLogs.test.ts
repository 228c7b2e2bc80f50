// GET /console/v1/audit_logs over real HTTP: every query parameter, pagination, the 90-day default,
// latestID, sort keys, errors and auth.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseAuditTime } from "../../src/api/auditTime.ts";
import { type RunningSimulator, startSimulator } from "../../src/simulator/index.ts";
import { allPages, auditPath, call } from "./helpers.ts";

// 12:00 PDT on Monday 2024-04-15; 120 days of history reach back over the March DST change.
const NOW = Date.UTC(2024, 3, 15, 19, 0, 0);
const ALL = "startDate=2023-01-01&endDate=2024-12-31";

// biome-ignore lint/suspicious/noExplicitAny: records are arbitrary JSON
const instant = (record: any): number => {
  const parsed = parseAuditTime(record.date, record.time);
  if (parsed === null) throw new Error(`unparseable ${record.date} / ${record.time}`);
  return parsed.occurredAt;
};

let sim: RunningSimulator;

beforeAll(async () => {
  // These tests read whole lists in one request (limit=5000): a server that declares that maximum.
  sim = await startSimulator({ records: 1500, seed: 7, now: NOW, maxLimit: 5000 });
});
afterAll(async () => {
  await sim.close();
});

describe("records and envelope", () => {
  it("serves records with every field of the real service", async () => {
    const reply = await call(sim, auditPath("limit=50"));
    expect(reply.status).toBe(200);
    expect(reply.body.message).toBe("Audit logs listed successfully.");
    expect(reply.body.data).toHaveLength(50);
    for (const record of reply.body.data) {
      expect(record.id).toMatch(/^[A-Za-z0-9]{22}$/);
      expect(record.updatedByUserID).toMatch(/^[A-Za-z0-9]{20}$/);
      expect(typeof record.name).toBe("string");
      expect(typeof record.changeLog).toBe("string");
      expect(typeof record.actionType).toBe("string");
      expect(typeof record.updatedBy).toBe("string");
      expect(record.modifierEmail).toMatch(/@/);
      expect(typeof record.changes).toBe("object");
      expect(Array.isArray(record.tags)).toBe(true);
      expect(record.date).toMatch(/^(Mon|Tue|Wed|Thu|Fri|Sat|Sun) [A-Z][a-z]{2} \d{2} \d{4}$/);
      expect(record.time).toMatch(/^\d{2}:\d{2}:\d{2} GMT-0[78]00 \(Pacific (Standard|Daylight) Time\)$/);
    }
  });

  it("renders the DST change of the server zone right, in both date styles", async () => {
    const [before, after] = sim.control.append([
      { at: Date.UTC(2024, 2, 10, 9, 59, 59), name: "dst-probe", actionType: "user_login" },
      { at: Date.UTC(2024, 2, 10, 10, 0, 0), name: "dst-probe", actionType: "user_login" },
    ]);
    expect(before).toMatchObject({
      date: "Sun Mar 10 2024",
      time: "01:59:59 GMT-0800 (Pacific Standard Time)",
    });
    expect(after).toMatchObject({
      date: "Sun Mar 10 2024",
      time: "03:00:00 GMT-0700 (Pacific Daylight Time)",
    });
    expect(instant(before)).toBe(Date.UTC(2024, 2, 10, 9, 59, 59));
    expect(instant(after)).toBe(Date.UTC(2024, 2, 10, 10, 0, 0));

    const long = await startSimulator({ records: 0, now: NOW, dateStyle: "long", timeZone: "UTC" });
    try {
      const [record] = long.control.append([
        { at: Date.UTC(2022, 8, 26, 23, 46, 14), name: "x", actionType: "user_login" },
      ]);
      expect(record).toMatchObject({
        date: "Monday, September 26, 2022",
        time: "11:46:14 PM GMT+0000 (Coordinated Universal Time)",
      });
    } finally {
      await long.close();
    }
  });
});

describe("pagination", () => {
  it("defaults to 100 records, page 1, newest first", async () => {
    const reply = await call(sim, auditPath(""));
    expect(reply.body.data).toHaveLength(100);
    expect(reply.body.pagination).toMatchObject({ itemsPerPage: 100, pageNumber: 1, previousPage: null });
    const instants = reply.body.data.map(instant);
    expect(instants).toEqual([...instants].sort((a, b) => b - a));
  });

  it("pages add up to the whole filtered list, with links without a scheme", async () => {
    const whole = await call(sim, auditPath(`${ALL}&limit=5000`));
    const total = whole.body.pagination.totalItems;
    expect(whole.body.data).toHaveLength(total);
    expect(total).toBeGreaterThan(1500); // the DST probes above were appended

    const limit = 37;
    const lastPage = Math.ceil(total / limit);
    const first = await call(sim, auditPath(`${ALL}&limit=${limit}&page=1`));
    expect(first.body.pagination).toMatchObject({ itemsPerPage: limit, pageNumber: 1, totalItems: total });
    expect(first.body.pagination.previousPage).toBeNull();
    expect(first.body.pagination.nextPage).toBe(
      `127.0.0.1:${sim.port}/console/v1/audit_logs?page=2&limit=${limit}`,
    );

    const last = await call(sim, auditPath(`${ALL}&limit=${limit}&page=${lastPage}`));
    expect(last.body.data).toHaveLength(total - (lastPage - 1) * limit);
    expect(last.body.pagination.nextPage).toBeNull();
    expect(last.body.pagination.previousPage).toContain(`page=${lastPage - 1}&limit=${limit}`);

    const beyond = await call(sim, auditPath(`${ALL}&limit=${limit}&page=${lastPage + 1}`));
    expect(beyond.body.data).toEqual([]);
    expect(beyond.body.pagination.totalItems).toBe(total);

    const paged = await allPages(sim, ALL, limit);
    expect(paged.map((r) => r.id)).toEqual(whole.body.data.map((r: { id: string }) => r.id));
  });

  it("writes relative links with the filters copied in and spaces unencoded when asked", async () => {
    const relative = await startSimulator({ records: 300, seed: 3, now: NOW, linkStyle: "relative" });
    try {
      const name = relative.control.append([{ name: "Daniel West", actionType: "user_login" }])[0]!.name;
      relative.control.append([
        { name, actionType: "user_login" },
        { name, actionType: "user_login" },
      ]);
      const reply = await call(relative, auditPath("id=Daniel%20West&sortKey=time&limit=1&page=2"));
      expect(reply.body.pagination.nextPage).toBe(
        "/console/v1/audit_logs?id=Daniel West&sortKey=time&page=3&limit=1",
      );
      expect(reply.body.pagination.previousPage).toBe(
        "/console/v1/audit_logs?id=Daniel West&sortKey=time&page=1&limit=1",
      );
    } finally {
      await relative.close();
    }
  });
});

describe("date window", () => {
  it("searches only the last 90 days when no date is given", async () => {
    const everything = await call(sim, auditPath(`${ALL}&limit=5000`));
    const defaulted = await call(sim, auditPath("limit=5000"));
    // Today is 2024-04-15 in Los Angeles; 90 days before is 2024-01-16, from its local midnight.
    const from = Date.UTC(2024, 0, 16, 8, 0, 0);
    const expected = everything.body.data
      .filter((r: unknown) => instant(r) >= from)
      .map((r: { id: string }) => r.id);
    expect(defaulted.body.data.map((r: { id: string }) => r.id)).toEqual(expected);
    expect(expected.length).toBeLessThan(everything.body.data.length);
    const explicit = await call(sim, auditPath("startDate=2024-01-16&endDate=2024-04-15&limit=5000"));
    expect(explicit.body.pagination.totalItems).toBe(defaulted.body.pagination.totalItems);
  });

  it("starts 90 days before endDate when startDate is omitted", async () => {
    const reply = await call(sim, auditPath("endDate=2024-03-01&limit=5000"));
    const explicit = await call(sim, auditPath("startDate=2023-12-02&endDate=2024-03-01&limit=5000"));
    expect(reply.body.pagination.totalItems).toBeGreaterThan(0);
    expect(reply.body.data.map((r: { id: string }) => r.id)).toEqual(
      explicit.body.data.map((r: { id: string }) => r.id),
    );
  });

  it("takes whole days of the server zone, both ends inclusive", async () => {
    // 23:59:59 PST on Feb 1 is 07:59:59 UTC on Feb 2; 00:00:00 PST on Feb 3 is 08:00 UTC.
    const [inside, firstMoment, outside] = sim.control.append([
      { at: Date.UTC(2024, 1, 2, 7, 59, 59), name: "edge", actionType: "user_login" },
      { at: Date.UTC(2024, 1, 1, 8, 0, 0), name: "edge", actionType: "user_login" },
      { at: Date.UTC(2024, 1, 3, 8, 0, 0), name: "edge", actionType: "user_login" },
    ]);
    const reply = await call(sim, auditPath("id=edge&startDate=2024-02-01&endDate=2024-02-02"));
    const ids = reply.body.data.map((r: { id: string }) => r.id);
    expect(ids).toEqual([inside!.id, firstMoment!.id]);
    expect(ids).not.toContain(outside!.id);
    const day = await call(sim, auditPath("startDate=2024-02-02&endDate=2024-02-02&limit=1000"));
    for (const record of day.body.data) expect(record.date).toBe("Fri Feb 02 2024");
  });

  it("accepts startTime/endTime in epoch ms", async () => {
    const from = Date.UTC(2024, 3, 1);
    const to = from + 3 * 86_400_000;
    const reply = await call(sim, auditPath(`startTime=${from}&endTime=${to}&limit=1000`));
    expect(reply.status).toBe(200);
    for (const record of reply.body.data) {
      expect(instant(record)).toBeGreaterThanOrEqual(from - 1000);
      expect(instant(record)).toBeLessThanOrEqual(to);
    }
    const tooWide = await call(sim, auditPath(`startTime=${from}&endTime=${from + 8 * 86_400_000}`));
    expect(tooWide.status).toBe(400);
  });
});

describe("filters and sorting", () => {
  it("filters on the record name with `id`", async () => {
    const whole = await call(sim, auditPath(`${ALL}&limit=5000`));
    const name = whole.body.data[10].name as string;
    const reply = await call(sim, auditPath(`${ALL}&limit=5000&id=${encodeURIComponent(name)}`));
    const expected = whole.body.data.filter((r: { name: string }) => r.name === name);
    expect(reply.body.data).toEqual(expected);
    expect(reply.body.pagination.totalItems).toBe(expected.length);
  });

  it("filters by one action type, repeated actionTypes, a single actionTypes value and tags", async () => {
    const whole = (await call(sim, auditPath(`${ALL}&limit=5000`))).body.data as {
      id: string;
      actionType: string;
      tags: string[];
    }[];
    const ids = (list: { id: string }[]) => list.map((r) => r.id);
    const of = (...types: string[]) => ids(whole.filter((r) => types.includes(r.actionType)));

    const one = await call(sim, auditPath(`${ALL}&limit=5000&actionType=gate_update`));
    expect(ids(one.body.data)).toEqual(of("gate_update"));
    expect(one.body.data.length).toBeGreaterThan(0);

    const single = await call(sim, auditPath(`${ALL}&limit=5000&actionTypes=user_login`));
    expect(ids(single.body.data)).toEqual(of("user_login"));

    const repeated = await call(
      sim,
      auditPath(
        `${ALL}&limit=5000&actionTypes=experiment_start&actionTypes=gate_create&actionTypes=user_login`,
      ),
    );
    expect(ids(repeated.body.data)).toEqual(of("experiment_start", "gate_create", "user_login"));
    const paged = await allPages(
      sim,
      `${ALL}&actionTypes=experiment_start&actionTypes=gate_create&actionTypes=user_login`,
      9,
    );
    expect(ids(paged)).toEqual(ids(repeated.body.data));

    const tagged = await call(sim, auditPath(`${ALL}&limit=5000&tags=compliance`));
    expect(ids(tagged.body.data)).toEqual(ids(whole.filter((r) => r.tags.includes("compliance"))));
    expect(tagged.body.data.length).toBeGreaterThan(0);
  });

  it("sorts by each of the eight keys in both orders", async () => {
    const whole = (await call(sim, auditPath(`${ALL}&limit=5000`))).body.data as Record<string, string>[];
    for (const key of ["id", "name", "changeLog", "actionType", "updatedBy", "updatedByUserID"]) {
      for (const order of ["asc", "desc"] as const) {
        const reply = await call(sim, auditPath(`${ALL}&limit=5000&sortKey=${key}&sortOrder=${order}`));
        const values = reply.body.data.map((r: Record<string, string>) => r[key]);
        const expected = whole.map((r) => r[key]!).sort();
        if (order === "desc") expected.reverse();
        expect(values, `${key} ${order}`).toEqual(expected);
      }
    }
    for (const key of ["time", "date"]) {
      const asc = await call(sim, auditPath(`${ALL}&limit=5000&sortKey=${key}&sortOrder=asc`));
      const instants = asc.body.data.map(instant);
      expect(instants).toEqual([...instants].sort((a, b) => a - b));
      const desc = await call(sim, auditPath(`${ALL}&limit=5000&sortKey=${key}`));
      expect(desc.body.data.map((r: { id: string }) => r.id)).toEqual(
        [...asc.body.data].reverse().map((r: { id: string }) => r.id),
      );
    }
  });

  it("latestID returns only newer records with desc and only older ones with asc, exclusive", async () => {
    const whole = (await call(sim, auditPath(`${ALL}&limit=5000`))).body.data as { id: string }[];
    const stop = whole[40]!.id;
    const newer = await call(sim, auditPath(`${ALL}&limit=5000&latestID=${stop}`));
    expect(newer.body.data.map((r: { id: string }) => r.id)).toEqual(whole.slice(0, 40).map((r) => r.id));
    const older = await call(sim, auditPath(`${ALL}&limit=5000&latestID=${stop}&sortOrder=asc`));
    expect(older.body.data.map((r: { id: string }) => r.id)).toEqual(
      whole
        .slice(41)
        .reverse()
        .map((r) => r.id),
    );
  });
});

describe("errors and auth", () => {
  it("answers 400 with errors for a bad date, sort key, order or limit", async () => {
    for (const query of [
      "startDate=2024-02-30",
      "endDate=04/01/2024",
      "sortKey=when",
      "sortOrder=up",
      "limit=0",
      "page=x",
    ]) {
      const reply = await call(sim, auditPath(query));
      expect(reply.status, query).toBe(400);
      expect(reply.body.status).toBe(400);
      expect(reply.body.message).toBe("Invalid request. Please check the request input and try again.");
      expect(reply.body.errors.length).toBeGreaterThan(0);
    }
  });

  it("answers 401 for a missing or wrong key without echoing it, and matches the header case-insensitively", async () => {
    const missing = await call(sim, auditPath(""), { key: null });
    expect(missing.status).toBe(401);
    const wrong = await call(sim, auditPath(""), { key: "console-THISISASECRETVALUE123" });
    expect(wrong.status).toBe(401);
    expect(wrong.body.status).toBe(401);
    expect(wrong.body.message).toMatch(
      /^This endpoint only accepts an active CONSOLE key, but an invalid key was sent\. Key: console-THI…$/,
    );
    expect(wrong.text).not.toContain("SECRETVALUE");
    const lower = await call(sim, auditPath("limit=1"), {
      key: null,
      headers: { "statsig-api-key": sim.settings.apiKey },
    });
    expect(lower.status).toBe(200);
  });

  it("uses a configured header name and key", async () => {
    const custom = await startSimulator({
      records: 10,
      now: NOW,
      apiKey: "console-k2",
      authHeader: "X-Api-Key",
    });
    try {
      expect((await call(custom, auditPath(""), { key: "console-k2" })).status).toBe(401);
      const ok = await call(custom, auditPath(""), { key: null, headers: { "x-api-key": "console-k2" } });
      expect(ok.status).toBe(200);
    } finally {
      await custom.close();
    }
  });

  it("answers 404 with the real message on an unknown route", async () => {
    const reply = await call(sim, "/console/v1/nothing_here");
    expect(reply.status).toBe(404);
    expect(reply.body).toEqual({
      status: 404,
      message: "Not Found. The requested resource could not be found.",
    });
  });
});
