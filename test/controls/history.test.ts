// Each control kind over the simulator's own history (not records appended by the test): the history
// plants hot-fixes with no review (some by CONSOLE API, the night ones labelled EMERGENCY), self-approved
// reviews and change logs without a ticket key, and each control must find exactly those cases, on
// both engines. The expectations are worked out here from the records themselves, by rules a reader
// can check by eye; the sync and the check engine run in this process (one `check --format junit` is
// spawned, end to end).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { XMLParser, XMLValidator } from "fast-xml-parser";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkProject } from "../../src/controls/check.ts";
import { type ControlsConfig, parseControlsConfig } from "../../src/controls/config.ts";
import type { Finding } from "../../src/controls/finding.ts";
import { nextWaiverRow } from "../../src/controls/waivers.ts";
import { writeReports } from "../../src/report/writeReports.ts";
import type { RunningSimulator } from "../../src/simulator/index.ts";
import { appendWaiver } from "../../src/store/controls/waivers.ts";
import { closeProjectStores, openStoreProjects, type ProjectStore } from "../../src/store/projectStores.ts";
import { runCliInProcess } from "../helpers/inProcessCli.ts";
import { runCli } from "../helpers/runCli.ts";
import { simEnv, startTestSimulator } from "../helpers/simSync.ts";
import { ENGINES, type TestStore, testStore } from "./engines.ts";

const DAY = 86_400_000;
const ALL_DAYS = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"];
const REVIEW_WINDOW = 30 * DAY;

const HISTORY_CONTROLS = [
  { id: "rr", kind: "review-required", severity: "high" },
  { id: "sa", kind: "no-self-approval", severity: "high" },
  {
    id: "cw",
    kind: "change-window",
    severity: "medium",
    days: ALL_DAYS,
    hours: "07:00-20:00",
    zone: "UTC",
    emergencyPattern: "EMERGENCY",
    postReviewDays: 2,
  },
  { id: "tk", kind: "ticket-reference", severity: "low", pattern: "FT-\\d+" },
  { id: "ra", kind: "restricted-actor", severity: "high", actors: ["CONSOLE API"] },
  { id: "complete", kind: "completeness", severity: "high" },
  { id: "intact", kind: "integrity", severity: "high" },
  { id: "fresh", kind: "sync-freshness", severity: "medium", maxAgeHours: 24 },
];

interface Rec {
  id: string;
  occurred_at: number;
  name: string;
  action_type: string;
  updated_by: string | null;
  change_log: string | null;
}

async function changesOf(store: TestStore, start: number, end: number): Promise<Rec[]> {
  const rows = await store.query<Rec>(
    `SELECT id, occurred_at, name, action_type, updated_by, change_log FROM experiment_state_changes
     WHERE occurred_at >= ? AND occurred_at < ?
     UNION ALL SELECT id, occurred_at, name, action_type, updated_by, change_log FROM config_edits
     WHERE occurred_at >= ? AND occurred_at < ?`,
    [start, end, start, end],
  );
  return rows
    .map((r) => ({ ...r, occurred_at: Number(r.occurred_at) }))
    .filter((r) => !r.action_type.includes("review"));
}

async function acceptsOf(store: TestStore): Promise<Rec[]> {
  const rows = await store.query<Rec>(
    "SELECT id, occurred_at, name, action_type, updated_by, change_log FROM audit_logs WHERE action_type LIKE '%review_accept'",
  );
  return rows.map((r) => ({ ...r, occurred_at: Number(r.occurred_at) }));
}

const sorted = (ids: Iterable<string>) => [...ids].sort();

describe.each(ENGINES)("controls over the simulator's history on %s", (engine) => {
  let sim: RunningSimulator;
  let store: TestStore;
  let parts: ProjectStore[];
  let config: ControlsConfig;
  let found: Map<string, string[]>;
  let findings: Finding[];
  let tickets: Map<string, string>;
  let changes: Rec[];
  let accepts: Rec[];
  const now = Date.now();
  // The history ends at the start of today (UTC), not at this instant: which of its changes fall in the
  // night window then does not depend on the hour the suite runs (at 07:27 UTC none of the unexcused
  // EMERGENCY changes did; ending at 00:00 on each of the seven weekdays, every test here passes).
  const historyEnd = Math.floor(now / DAY) * DAY;
  const start = Date.parse(new Date(now - 40 * DAY).toISOString().slice(0, 10));
  // Up to the start of yesterday: every day of the period is over and reconciled.
  const end = Date.parse(new Date(now - DAY).toISOString().slice(0, 10));

  beforeAll(async () => {
    sim = await startTestSimulator({ records: 3000, days: 45, timeZone: "UTC", now: historyEnd });
    store = await testStore(engine);
    const sync = await runCliInProcess(["sync", "--quiet"], { env: simEnv(sim, store.db) });
    expect(sync.code, sync.stderr).toBe(0);
    config = parseControlsConfig(JSON.stringify({ controls: HISTORY_CONTROLS }), "history.json");
    parts = await openStoreProjects(store.db);
    const checked = await checkProject(parts[0]!, { ...config, sinks: [] }, { start, end }, now);
    findings = checked.findings;
    found = new Map(config.controls.map((c) => [c.id, []]));
    for (const f of checked.findings) found.get(f.control)!.push(f.recordId ?? f.id);
    tickets = new Map(
      (
        await store.query<{ record_id: string; ticket: string }>(
          "SELECT record_id, ticket FROM control_tickets",
        )
      ).map((t) => [t.record_id, t.ticket]),
    );
    changes = await changesOf(store, start, end);
    accepts = await acceptsOf(store);
  }, 300_000);

  afterAll(async () => {
    await closeProjectStores(parts ?? []);
    await sim?.close();
  });

  it("restricted-actor: the hot-fixes made by CONSOLE API, and no other change", () => {
    const expected = changes.filter((c) => c.updated_by === "CONSOLE API");
    expect(expected.length).toBeGreaterThan(0);
    for (const c of expected) expect(c.change_log).toMatch(/^(Hotfix|EMERGENCY hotfix): /);
    expect(sorted(found.get("ra")!)).toEqual(sorted(expected.map((c) => c.id)));
  });

  it("ticket-reference: the changes whose log cites no FT- key; the others' keys are stored", () => {
    const expected = changes.filter((c) => !/FT-\d+/.test(c.change_log ?? ""));
    // Most change logs cite a ticket: the planted ones are a minority.
    expect(expected.length).toBeGreaterThan(0);
    expect(expected.length).toBeLessThan(changes.length / 2);
    expect(sorted(found.get("tk")!)).toEqual(sorted(expected.map((c) => c.id)));
    for (const c of changes.filter((x) => !expected.includes(x)))
      expect(tickets.get(c.id)).toBe(/FT-\d+/.exec(c.change_log!)![0]);
  });

  it("change-window: night changes, and night EMERGENCY changes with no approval of their entity within two days", () => {
    const night = (at: number) => {
      const hour = new Date(at).getUTCHours();
      return hour < 7 || hour >= 20;
    };
    const emergencies = changes.filter((c) => night(c.occurred_at) && /EMERGENCY/.test(c.change_log ?? ""));
    const reviewedAfter = (c: Rec) =>
      accepts.some(
        (a) => a.name === c.name && a.occurred_at > c.occurred_at && a.occurred_at <= c.occurred_at + 2 * DAY,
      );
    expect(emergencies.length).toBeGreaterThan(1);
    const expected = changes.filter(
      (c) =>
        night(c.occurred_at) &&
        (!/EMERGENCY/.test(c.change_log ?? "") || (!reviewedAfter(c) && now >= c.occurred_at + 2 * DAY)),
    );
    // Some EMERGENCY changes are excused by a review after them, some are not.
    expect(expected.filter((c) => emergencies.includes(c)).length).toBeGreaterThan(0);
    expect(sorted(found.get("cw")!)).toEqual(sorted(expected.map((c) => c.id)));
  });

  it("review-required: the hot-fixes (no review requested), and no reviewed change", () => {
    const expected = changes.filter((c) => /^(Hotfix|EMERGENCY hotfix): /.test(c.change_log ?? ""));
    expect(expected.length).toBeGreaterThan(0);
    expect(sorted(found.get("rr")!)).toEqual(sorted(expected.map((c) => c.id)));
  });

  it("no-self-approval: approvals by the requester, and the changes their approver then made", () => {
    const selfApproved = accepts.filter(
      (a) =>
        a.occurred_at >= start &&
        a.occurred_at < end &&
        a.change_log === `${a.change_log!.replace(/ requested by .*$/, "")} requested by ${a.updated_by}`,
    );
    expect(selfApproved.length).toBeGreaterThan(0);
    // The change a review approves is the entity's next change, made by its author.
    const latestApproval = (c: Rec) =>
      accepts
        .filter(
          (a) =>
            a.name === c.name &&
            a.occurred_at <= c.occurred_at &&
            a.occurred_at >= c.occurred_at - REVIEW_WINDOW,
        )
        .sort((x, y) => x.occurred_at - y.occurred_at)
        .at(-1);
    const changesByApprover = changes.filter((c) => {
      const a = latestApproval(c);
      return a !== undefined && a.updated_by === c.updated_by;
    });
    expect(sorted(found.get("sa")!)).toEqual(
      sorted([...selfApproved, ...changesByApprover].map((c) => c.id)),
    );
  });

  it("the evidence controls find nothing on a whole, fresh, intact store", () => {
    expect(found.get("complete")).toEqual([]);
    expect(found.get("intact")).toEqual([]);
    expect(found.get("fresh")).toEqual([]);
  });

  it("the report opens with the same findings, each waiver beside its finding, and writes them to a CSV the manifest covers", async () => {
    const waived = findings.find((f) => f.control === "rr")!;
    await appendWaiver(parts[0]!.store, (previous) =>
      nextWaiverRow(previous, {
        finding_id: waived.id,
        action: "waive",
        reason: "INC-42, reviewed after",
        by_name: "Dana Lee",
        expires: "2099-12-31",
        created_at: now,
      }),
    );
    const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
    const outDir = join(store.dir, "reports");
    const result = await writeReports({
      dbPath: store.db,
      from: day(start),
      to: day(end - 1),
      outDir,
      controls: config.controls,
      generatedAt: now,
      bom: false,
    });
    const md = readFileSync(result.files.find((f) => f.name.startsWith("compliance_"))!.path, "utf8");
    expect(md.indexOf("## Controls")).toBeGreaterThan(0);
    expect(md.indexOf("## Controls")).toBeLessThan(md.indexOf("## Summary"));
    for (const control of config.controls.filter((c) => c.kind !== "integrity")) {
      const n = found.get(control.id)!.length;
      const open = n - (control.id === "rr" ? 1 : 0);
      expect(md).toContain(`| ${control.id} | ${control.kind} | ${control.severity} | `);
      expect(md).toMatch(
        new RegExp(`\\| ${control.id} \\|[^\\n]*\\| ${n} \\| ${n - open} \\| ${open} \\|\\n`),
      );
    }
    expect(md).toContain(
      "| cw | change-window | medium | days: sun, mon, tue, wed, thu, fri, sat; hours: 07:00-20:00;",
    );
    expect(md).toContain(`| ${waived.id} |`);
    expect(md).toMatch(
      new RegExp(
        `\\| ${waived.id} \\|.*\\| Dana Lee: INC-42, reviewed after \\(.*, expires 2099-12-31\\) \\|`,
      ),
    );

    const csvFile = result.files.find((f) => f.name.startsWith("findings_"))!;
    const manifest = JSON.parse(readFileSync(result.manifestPath, "utf8")) as {
      files: { name: string; sha256: string }[];
    };
    expect(manifest.files.map((f) => f.name)).toContain(csvFile.name);
    const lines = readFileSync(csvFile.path, "utf8").trim().split("\r\n");
    expect(lines[0]).toBe(
      "finding_id,control,kind,severity,time,epoch_ms,record_id,entity_name,action_type,actor,message,waived_by,waiver_reason,waived_at,waiver_expires",
    );
    const ids = lines.slice(1).map((l) => l.split(",")[0]!);
    expect(sorted(ids)).toEqual(sorted(findings.filter((f) => f.control !== "intact").map((f) => f.id)));
    expect(lines.find((l) => l.startsWith(`${waived.id},`))).toContain(',Dana Lee,"INC-42, reviewed after",');

    // The ticket key is the change CSVs' last column.
    const edits = readFileSync(result.files.find((f) => f.name.startsWith("config-edits_"))!.path, "utf8");
    const [header, ...rows] = edits.trim().split("\r\n");
    expect(header!.endsWith(",ticket")).toBe(true);
    const cited = rows.filter((r) => /\(FT-\d+\)/.test(r));
    expect(cited.length).toBeGreaterThan(100);
    for (const r of cited) expect(r.endsWith(`,${/\((FT-\d+)\)/.exec(r)![1]}`)).toBe(true);
    for (const r of rows.filter((x) => !cited.includes(x))) expect(r).not.toMatch(/,FT-\d+$/);
  });

  it.runIf(engine === "sqlite")(
    "check --format junit end to end: exit 1, one sentence, every finding in its control's <failure>",
    async () => {
      const file = store.config({ controls: HISTORY_CONTROLS });
      const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
      const result = await runCli(
        ["check", "--from", day(start), "--to", day(end - 1), "--format", "junit", "--config", file],
        { env: { FLAGTRAIL_DB: store.db } },
      );
      expect(result.code).toBe(1);
      expect(result.stderr.trim().split("\n")).toHaveLength(1);
      expect(result.stderr).toMatch(
        /^flagtrail: \d+ unwaived findings at or above low severity \(controls rr, sa, cw, tk, ra\)\./,
      );
      expect(XMLValidator.validate(result.stdout)).toBe(true);
      const xml = new XMLParser({
        ignoreAttributes: false,
        attributeNamePrefix: "",
        isArray: (name) => name === "testcase" || name === "failure",
      }).parse(result.stdout) as {
        testsuites: {
          testsuite: {
            tests: string;
            failures: string;
            testcase: { name: string; failure?: unknown[]; "system-out"?: string }[];
          };
        };
      };
      const suite = xml.testsuites.testsuite;
      expect(suite.tests).toBe(String(HISTORY_CONTROLS.length));
      expect(suite.testcase.map((c) => c.name)).toEqual(HISTORY_CONTROLS.map((c) => c.id));
      for (const c of suite.testcase) {
        // The rr finding waived above is in system-out, not in the failure's list.
        const waived = c.name === "rr" ? 1 : 0;
        const open = found.get(c.name)!.length - waived;
        // At most one <failure> a case (JUnit readers count cases): its text lists each open finding.
        expect(c.failure?.length ?? 0).toBe(open > 0 ? 1 : 0);
        const text = (c.failure?.[0] as { "#text"?: string } | undefined)?.["#text"] ?? "";
        expect(text === "" ? 0 : text.split("\n").length).toBe(open);
        if (waived) expect(c["system-out"]).toMatch(/^waived rr:\S+ by Dana Lee: INC-42, reviewed after$/);
      }
      const failures = suite.testcase.filter((c) => (c.failure?.length ?? 0) > 0).length;
      expect(suite.failures).toBe(String(failures));
      expect(failures).toBeLessThanOrEqual(Number(suite.tests));
    },
    120_000,
  );
});
