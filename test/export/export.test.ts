// `flagtrail export` on both engines, in-process where it can be (the OCSF mapping field by field, raw
// byte for byte, cursors, the CLI's re-runs and sentences) and spawned where only a real process shows it
// (kill -9 mid-export) or end to end (a usage error's exit code).
import { existsSync, mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { action } from "../../src/commands/export.ts";
import { checkProject } from "../../src/controls/check.ts";
import { parseControlsConfig } from "../../src/controls/config.ts";
import { outboxFindingSchema } from "../../src/controls/finding.ts";
import { UsageError } from "../../src/errors.ts";
import { ACTION_TYPE_MAPPING } from "../../src/export/activities.ts";
import { OCSF_VERSION, PRODUCT } from "../../src/export/ocsf.ts";
import { detectionFindingSchema, findingEventId, findingToOcsf } from "../../src/export/ocsfFindings.ts";
import { entityManagementSchema } from "../../src/export/ocsfRecords.ts";
import { fileSink } from "../../src/export/output.ts";
import { type ExportRequest, runExport } from "../../src/export/run.ts";
import { type RunningSimulator, startSimulator } from "../../src/simulator/index.ts";
import { readCursor } from "../../src/store/export/cursors.ts";
import type { ProjectStore } from "../../src/store/projectStores.ts";
import { queriesOf, sql } from "../../src/store/query.ts";
import { openStore, type Store } from "../../src/store/syncStore.ts";
import { createSyncClient } from "../../src/sync/client.ts";
import { runSync } from "../../src/sync/runSync.ts";
import { runCliInProcess } from "../helpers/inProcessCli.ts";
import { runCli } from "../helpers/runCli.ts";
import { freshDatabase } from "../pg/cluster.ts";

const NOW = Date.UTC(2026, 10, 20, 12, 0, 0);
const ENGINES = ["sqlite", "postgres"] as const;
type Engine = (typeof ENGINES)[number];
const STALL_HOOK = new URL("../helpers/stallWrites.mjs", import.meta.url).href;

let sim: RunningSimulator;
const stores = {} as Record<Engine, { value: string; store: Store }>;

async function sync(store: Store): Promise<void> {
  const client = createSyncClient(
    { baseUrl: sim.url, apiKey: sim.settings.apiKey, authHeader: sim.settings.authHeader },
    { rateLimits: [{ limit: 100_000, windowMs: 1000 }] },
  );
  const summary = await runSync(store, client, { since: "2026-08-01", now: () => NOW, concurrency: 1 });
  expect(summary.outcome).toBe("ok");
}

async function open(value: string): Promise<{ value: string; store: Store }> {
  const store = await openStore(value);
  await sync(store);
  // Findings on the records, for the severity and enrichments of their events.
  const config = parseControlsConfig(
    JSON.stringify({
      controls: [{ id: "rr", kind: "review-required", severity: "high" }],
      sinks: [{ name: "secops", kind: "webhook", url: "https://hooks.example.com/x", secretEnv: "UNUSED" }],
    }),
    "test.json",
  );
  await checkProject({ project: "default", store }, config, { start: 0, end: NOW }, NOW);
  return { value, store };
}

beforeAll(async () => {
  sim = await startSimulator({ host: "127.0.0.1", port: 0, seed: 11, records: 1200, days: 100, now: NOW });
  stores.sqlite = await open(join(mkdtempSync(join(tmpdir(), "flagtrail-export-")), "store.db"));
  stores.postgres = await open(await freshDatabase("export"));
}, 240_000);

afterAll(async () => {
  for (const s of Object.values(stores)) await s?.store.close();
  await sim?.close();
});

interface StoredRow {
  seq: number;
  id: string;
  name: string;
  action_type: string;
  updated_by: string | null;
  updated_by_user_id: string | null;
  modifier_email: string | null;
  occurred_at: number | null;
  date_text: string;
  time_text: string;
  raw: string;
}

async function storedRows(store: Store): Promise<StoredRow[]> {
  const q = await queriesOf(store);
  const rows = await q.all<StoredRow>(sql`
    SELECT seq, id, name, action_type, updated_by, updated_by_user_id, modifier_email, occurred_at,
           date_text, time_text, raw
    FROM audit_logs ORDER BY seq`);
  return rows.map((r) => ({
    ...r,
    seq: Number(r.seq),
    occurred_at: r.occurred_at === null ? null : Number(r.occurred_at),
  }));
}

function tempFile(name: string): string {
  return join(mkdtempSync(join(tmpdir(), "flagtrail-export-out-")), name);
}

async function exportTo(
  store: Store,
  out: string,
  request: Partial<ExportRequest> = {},
): Promise<{ lines: string[]; events: number }> {
  const parts: ProjectStore[] = [{ project: "default", store }];
  const result = await runExport(
    { parts, format: "ocsf", findings: false, batchSize: 97, now: NOW, ...request },
    await fileSink(out),
  );
  const text = readFileSync(out, "utf8");
  const lines = text === "" ? [] : text.slice(0, -1).split("\n");
  expect(text === "" || text.endsWith("\n")).toBe(true);
  return { lines, events: result.events };
}

describe.each(ENGINES)("flagtrail export on %s", (engine) => {
  it("writes one OCSF Entity Management event per stored record, each attribute as the mapping says", async () => {
    const { store } = stores[engine];
    const rows = await storedRows(store);
    const { lines, events } = await exportTo(store, tempFile("all.ndjson"));
    expect(events).toBe(rows.length);
    expect(lines).toHaveLength(rows.length);
    const parsed = lines.map((line) => entityManagementSchema.strict().parse(JSON.parse(line)));
    // Each event's attributes against its row's, compared as one array (one expect for 1,200 events
    // instead of 20 each: vitest's expect calls, not the comparisons, were most of the test's time).
    const attributes = (event: (typeof parsed)[number]) => ({
      class_uid: event.class_uid,
      category_uid: event.category_uid,
      activity_id: event.activity_id,
      type_uid: event.type_uid,
      time: event.time,
      uid: event.metadata.uid,
      version: event.metadata.version,
      product: event.metadata.product,
      tenant_uid: event.metadata.tenant_uid,
      original_time: event.metadata.original_time,
      project: event.unmapped.project,
      event_id: event.unmapped.event_id,
      user: { name: event.actor.user.name, uid: event.actor.user.uid, email: event.actor.user.email_addr },
      entity: { name: event.entity.name, type: event.entity.type },
    });
    const expected = rows.map((row, i) => {
      const [activity, entityType] = ACTION_TYPE_MAPPING[row.action_type as keyof typeof ACTION_TYPE_MAPPING];
      return {
        class_uid: 3004,
        category_uid: 3,
        activity_id: activity,
        type_uid: 300400 + activity,
        time: row.occurred_at,
        uid: row.id,
        version: OCSF_VERSION,
        product: { ...PRODUCT },
        tenant_uid: "default",
        original_time: `${row.date_text} ${row.time_text}`,
        project: "default",
        event_id: `default:${row.id}`,
        user: {
          name: row.updated_by ?? undefined,
          uid: row.updated_by_user_id ?? undefined,
          email: row.modifier_email ?? undefined,
        },
        entity: {
          name: row.name,
          type:
            entityType === "config" && parsed[i]?.entity.uid !== undefined ? "dynamic_config" : entityType,
        },
      };
    });
    expect(parsed.map(attributes)).toEqual(expected);
    const withFinding = parsed.filter((event) => event.severity_id === 4).length;
    const withRuleDiff = parsed.filter((event) => event.unmapped.rule_diff !== undefined).length;
    // The review-required findings raise their records' severity to High and travel as enrichments.
    const q = await queriesOf(store);
    const findings = await q.all<{ record_id: string }>(
      sql`SELECT record_id FROM control_findings WHERE record_id IS NOT NULL`,
    );
    expect(findings.length).toBeGreaterThan(0);
    expect(withFinding).toBe(new Set(findings.map((f) => f.record_id)).size);
    const flagged = parsed.find((e) => e.metadata.uid === findings[0]!.record_id)!;
    expect(
      flagged.enrichments?.some(
        (e) => e.name === "control.finding" && e.value === `rr:${flagged.metadata.uid}`,
      ),
    ).toBe(true);
    expect(withRuleDiff).toBeGreaterThan(0);
    // The last approval before a change: an accept record of the same entity, not after the change.
    const byId = new Map(rows.map((r) => [r.id, r]));
    const approved = parsed.filter((e) => e.enrichments?.some((x) => x.name === "review.last_approval"));
    expect(approved.length).toBeGreaterThan(0);
    for (const event of approved) {
      const approval = byId.get(event.enrichments!.find((x) => x.name === "review.last_approval")!.value)!;
      expect(["config_review_accept", "experiment_review_accept"]).toContain(approval.action_type);
      expect(approval.name).toBe(event.entity.name);
      expect(approval.occurred_at).toBeLessThanOrEqual(event.time);
    }
  });

  it("--format raw writes each stored record's raw JSON byte for byte, in seq order", async () => {
    const { store } = stores[engine];
    const rows = await storedRows(store);
    const out = tempFile("raw.ndjson");
    await exportTo(store, out, { format: "raw" });
    const expected = Buffer.from(rows.map((r) => `${r.raw}\n`).join(""), "utf8");
    const written = readFileSync(out);
    // Buffer#equals, not toEqual: a deep comparison of a megabyte, byte by byte, takes vitest seconds.
    expect(written.length).toBe(expected.length);
    expect(written.equals(expected)).toBe(true);
  });

  it("a period holds exactly the records that occurred in it", async () => {
    const { store } = stores[engine];
    const rows = await storedRows(store);
    const from = Date.UTC(2026, 9, 1);
    const to = Date.UTC(2026, 10, 1);
    const { lines } = await exportTo(store, tempFile("october.ndjson"), { from, to });
    const expected = rows.filter(
      (r) => r.occurred_at !== null && r.occurred_at >= from && r.occurred_at < to,
    );
    expect(expected.length).toBeGreaterThan(0);
    expect(lines.map((l) => JSON.parse(l).metadata.uid)).toEqual(expected.map((r) => r.id));
    // Each event with every detail (rule diff, approval, findings) the whole history's export gives it:
    // a period's details are read within the period's bounds.
    const whole = await exportTo(store, tempFile("whole.ndjson"));
    const byUid = new Map(whole.lines.map((l) => [JSON.parse(l).metadata.uid as string, l]));
    expect(lines).toEqual(lines.map((l) => byUid.get(JSON.parse(l).metadata.uid)));
    expect(lines.filter((l) => l.includes("review.last_approval"))).not.toHaveLength(0);
  });

  it("a cursor gives the next export exactly the records synced since", async () => {
    const { store } = stores[engine];
    const cursor = `c-${engine}`;
    const first = await exportTo(store, tempFile("first.ndjson"), { cursor });
    const before = await storedRows(store);
    expect(first.events).toBe(before.length);
    expect(await readCursor(store, "default", cursor)).toBe(before.at(-1)!.seq);
    sim.control.insertAtHead(7);
    await sync(store);
    const after = await storedRows(store);
    const fresh = after.slice(before.length);
    expect(fresh.length).toBeGreaterThanOrEqual(7);
    const second = await exportTo(store, tempFile("second.ndjson"), { cursor });
    expect(second.lines.map((l) => JSON.parse(l).metadata.uid)).toEqual(fresh.map((r) => r.id));
    const third = await exportTo(store, tempFile("third.ndjson"), { cursor });
    expect(third.lines).toEqual([]);
  });

  it("--findings writes each control finding once as a Detection Finding, as the outbox's alert maps", async () => {
    const { store } = stores[engine];
    const q = await queriesOf(store);
    const stored = await q.all<{ id: string; severity: string; record_id: string | null }>(
      sql`SELECT id, severity, record_id FROM control_findings ORDER BY id COLLATE "binary"`,
    );
    const { lines } = await exportTo(store, tempFile("findings.ndjson"), { findings: true });
    const events = lines.map((l) => detectionFindingSchema.strict().parse(JSON.parse(l)));
    expect(events.map((e) => e.finding_info.uid)).toEqual(stored.map((f) => f.id));
    for (const [i, event] of events.entries()) {
      expect(event.class_uid).toBe(2004);
      expect(event.type_uid).toBe(200401);
      expect(event.severity_id).toBe({ low: 2, medium: 3, high: 4 }[stored[i]!.severity]);
      expect(event.status).toBe("New");
      expect(event.metadata.tenant_uid).toBe("default");
      expect(event.unmapped.event_id).toBe(findingEventId("default", stored[i]!.id));
      expect(event.finding_info.related_events).toEqual([
        { uid: stored[i]!.record_id, type: "Entity Management" },
      ]);
    }
    // What a sink sends from the outbox is the same event.
    const outbox = await q.all<{ finding_id: string; payload: string }>(
      sql`SELECT finding_id, payload FROM control_outbox ORDER BY finding_id COLLATE "binary"`,
    );
    expect(outbox.map((o) => o.finding_id)).toEqual(stored.map((f) => f.id));
    expect(
      outbox.map((o) => findingToOcsf(outboxFindingSchema.parse(JSON.parse(o.payload)).finding)),
    ).toEqual(events);
  });

  it("kill -9 half-way through the file leaves the cursor; the next run writes every record once", async () => {
    const { value, store } = stores[engine];
    const out = tempFile("killed.ndjson");
    const args = ["export", "--db", value, "--cursor", "k", "--out", out, "--batch-size", "50"];
    let sawBytes = false;
    const killed = await runCli(args, {
      nodeArgs: ["--import", STALL_HOOK],
      env: { FLAGTRAIL_TEST_STALL_AFTER_WRITES: "3" },
      timeoutMs: 120_000,
      onSpawn: (child) => {
        const poll = setInterval(() => {
          if (existsSync(`${out}.tmp`) && statSync(`${out}.tmp`).size > 0) {
            sawBytes = true;
            clearInterval(poll);
            child.kill("SIGKILL");
          }
        }, 20);
        child.on("exit", () => clearInterval(poll));
      },
    });
    expect(sawBytes).toBe(true);
    expect(killed.signal).toBe("SIGKILL");
    expect(existsSync(out)).toBe(false);
    expect(await readCursor(store, "default", "k")).toBe(0);

    // The re-run in this process (the killed one and the usage error below are spawned).
    const rerun = await runCliInProcess(args);
    expect(rerun.stderr).toBe("");
    expect(rerun.code).toBe(0);
    const rows = await storedRows(store);
    const ids = readFileSync(out, "utf8")
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l).metadata.uid);
    expect(ids).toEqual(rows.map((r) => r.id));
    expect(existsSync(`${out}.tmp`)).toBe(false);
    expect(await readCursor(store, "default", "k")).toBe(rows.at(-1)!.seq);
    expect(rerun.stdout).toMatch(
      // "default 12" read as a default value: the project is named as one.
      new RegExp(
        `^Wrote ${rows.length} events to .* \\(project default: ${rows.length}, cursor k at seq ${rows.at(-1)!.seq}\\)\\.\\n$`,
      ),
    );
  }, 240_000);
});

describe("flagtrail export: usage", () => {
  it.each([
    [{ cursor: "siem" }, /^--cursor needs --out: /],
    [{ cursor: "siem", out: "x.ndjson", from: "2026-10-01" }, /^--cursor exports what that consumer/],
    [{ format: "xml" }, /^--format: /],
    [{ findings: true, format: "raw" }, /^--findings writes OCSF Detection Findings/],
    [{ findings: true, cursor: "siem", out: "x.ndjson" }, /^--findings exports the findings of a period/],
    [{ to: "2026-10-01" }, /^--to needs --from\.$/],
    [{ batchSize: "0" }, /^--batch-size: /],
    [{ cursor: "../x", out: "x.ndjson" }, /^--cursor: a cursor name is/],
    [{ cursor: "siem", out: "/dev/null" }, /^--cursor needs --out to name a file, not a device or pipe/],
  ])("export %j is refused as bad usage", async (options, message) => {
    const error = await action({ db: stores.sqlite.value, ...options }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UsageError);
    expect((error as Error).message).toMatch(message);
  });

  it("--cursor refuses to replace a file holding events (its shipper may not have read them)", async () => {
    const out = tempFile("unread.ndjson");
    writeFileSync(out, '{"unread":true}\n');
    const error = await action({ db: stores.sqlite.value, cursor: "siem", out }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UsageError);
    expect((error as Error).message).toMatch(
      /^--cursor would replace .*unread\.ndjson, whose events its consumer/,
    );
    expect(readFileSync(out, "utf8")).toBe('{"unread":true}\n');
  });

  it("bad usage from the CLI: exit 2 and one sentence, nothing on stdout", async () => {
    const result = await runCli(["export", "--db", stores.sqlite.value, "--cursor", "siem"]);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe("");
    expect(result.stderr.trim().split("\n")).toHaveLength(1);
    expect(result.stderr).toMatch(
      /--cursor needs --out: the cursor moves only once a file holds the events on disk\.$/m,
    );
  });

  it("an output directory that does not exist: exit 1, one sentence naming the file", async () => {
    const out = join(tmpdir(), "flagtrail-no-such-dir", "x.ndjson");
    const result = await runCliInProcess(["export", "--db", stores.sqlite.value, "--out", out]);
    expect(result.code).toBe(1);
    expect(result.stderr.trim()).toMatch(/Cannot create .*x\.ndjson\.tmp \(ENOENT\)\.$/);
  });
});
