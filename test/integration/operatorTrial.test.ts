// An operator's trial (h47), kept as tests: what an operator runs around the store, with real receivers
// on 127.0.0.1 and the real CLI. Delivery: a sink that hangs or refuses gets one request per run while a
// healthy sink beside it gets every alert; two `check --notify` or two `export --sink` at once send each
// alert and event once (the second run skips the sink the first is delivering to). Daemon stop: SIGTERM
// sends no further alert. Doctor: a multi-project store's project file readable by others is named.
// Export: OCSF attributes without a value are left out, not null. And `waive --expires` with a bad day
// is bad usage. One simulator and one synced SQLite store serve the file; each test works on its own
// copy of the store. Every wait is on a condition (a request arrived, a process ended), never a clock.
import { chmodSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningSimulator } from "../../src/simulator/index.ts";
import { API } from "../controls/plant.ts";
import { startReceiver } from "../helpers/alertReceiver.ts";
import { spawnDaemon, waitUntil } from "../helpers/daemonProcess.ts";
import { runCliInProcess } from "../helpers/inProcessCli.ts";
import { runCli } from "../helpers/runCli.ts";
import {
  copySqliteStore,
  daysAgo,
  simEnv,
  startTestSimulator,
  tempDbPath,
  withDb,
} from "../helpers/simSync.ts";

const SECRET = "whsec-trial-h47";
const PLANTED = 6;

function writeConfig(db: string, name: string, body: unknown): string {
  const path = join(dirname(db), name);
  writeFileSync(path, JSON.stringify(body, null, 2));
  return path;
}

const RESTRICTED = { id: "ra", kind: "restricted-actor", severity: "high", entityPattern: "^trial_ra_" };
const CONTROLS = [{ ...RESTRICTED, actors: ["CONSOLE API"] }];

const webhook = (name: string, url: string) => ({
  name,
  kind: "webhook",
  url,
  secretEnv: "HOOK_SECRET",
  backoffSeconds: 0,
});

function hookConfig(db: string, url: string): string {
  return writeConfig(db, "hook.json", { controls: CONTROLS, sinks: [webhook("hook", url)] });
}

/** The outbox rows of `sink`: whether delivered and the last error. */
function outboxOf(db: string, sink: string) {
  return withDb(db, (sqlite) =>
    sqlite
      .prepare("SELECT finding_id, delivered_at, last_error FROM control_outbox WHERE sink = ?")
      .all(sink),
  ) as { finding_id: string; delivered_at: number | null; last_error: string | null }[];
}

describe("an operator's trial (h47)", () => {
  let sim: RunningSimulator;
  let synced: string;

  beforeAll(async () => {
    sim = await startTestSimulator({ records: 200, days: 20, timeZone: "UTC" });
    const day = Date.parse(`${daysAgo(2)}T00:00:00Z`);
    for (let i = 0; i < PLANTED; i += 1) {
      sim.control.append([
        { at: day + (9 + i) * 3_600_000, name: `trial_ra_${i}`, actionType: "gate_update", actor: API },
      ]);
    }
    synced = tempDbPath("flagtrail-h47-");
    const sync = await runCliInProcess(["sync", "--since", daysAgo(20), "--quiet"], {
      env: simEnv(sim, synced),
    });
    expect(sync.code, sync.stderr).toBe(0);
  });

  afterAll(async () => {
    await sim?.close();
  });

  it("waive --expires with a value that is not YYYY-MM-DD is bad usage (exit 2), not an unexpected error", async () => {
    const db = await copySqliteStore(synced);
    for (const expires of ["tomorrow", "2026-12-1", "2026-13-01"]) {
      const result = await runCliInProcess(
        ["waive", "ra:any", "--reason", "r", "--by", "d", "--expires", expires],
        { env: simEnv(sim, db) },
      );
      expect(result.stderr).not.toMatch(/unexpected error/);
      expect(result.code, `--expires ${expires}: ${result.stderr}`).toBe(2);
    }
  });

  it("check --notify sends one request to a sink that hangs and one to a sink that refuses; a healthy sink gets every alert", async () => {
    const db = await copySqliteStore(synced);
    const hang = await startReceiver("hang");
    const refuse = await startReceiver("refuse");
    const live = await startReceiver("ok");
    try {
      const config = writeConfig(db, "three.json", {
        controls: CONTROLS,
        sinks: [webhook("hang", hang.url), webhook("refuse", refuse.url), webhook("live", live.url)],
      });
      const env = simEnv(sim, db, { FLAGTRAIL_CONFIG: config, HOOK_SECRET: SECRET });
      const result = await runCli(["check", "--from", daysAgo(3), "--notify", "--format", "json"], { env });
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(/12 alerts wait undelivered in the outbox: 6 for sink "hang" \(/);
      // Before: one request per due alert per run (6 each, the hanging one 10 s apiece, one after another).
      expect(hang.requests).toHaveLength(1);
      expect(refuse.requests).toHaveLength(1);
      expect(live.requests.map((r) => r.key).sort()).toEqual([...new Set(live.requests.map((r) => r.key))]);
      expect(live.requests).toHaveLength(PLANTED);
      // Every alert of the sinks that failed is still undelivered, with the error of the one request.
      const hung = outboxOf(db, "hang");
      expect(hung).toHaveLength(PLANTED);
      expect(hung.every((r) => r.delivered_at === null && r.last_error === hung[0]!.last_error)).toBe(true);
      expect(hung[0]!.last_error).toBeTruthy();
      expect(outboxOf(db, "refuse").map((r) => [r.delivered_at, r.last_error])).toEqual(
        Array.from({ length: PLANTED }, () => [null, "HTTP 503"]),
      );
      expect(outboxOf(db, "live").every((r) => r.delivered_at !== null)).toBe(true);
    } finally {
      await Promise.all([hang.close(), refuse.close(), live.close()]);
    }
  });

  it("the daemon stops on SIGTERM without sending more alerts to a webhook that never answers", async () => {
    const db = await copySqliteStore(synced);
    const receiver = await startReceiver("hang");
    try {
      const env = simEnv(sim, db, { FLAGTRAIL_CONFIG: hookConfig(db, receiver.url), HOOK_SECRET: SECRET });
      const daemon = spawnDaemon(["--cron", "*/2 * * * * *"], env);
      await waitUntil(() => receiver.requests.length >= 1, "the first alert to reach the receiver");
      const signalled = Date.now();
      daemon.child().kill("SIGTERM");
      const result = await daemon.done;
      // docs/operations.md: on SIGTERM "the worker sends no new request … and exits 0".
      expect(receiver.requests.filter((r) => r.at > signalled)).toEqual([]);
      expect(result.code).toBe(0);
      expect(result.signal).toBeNull();
      expect(outboxOf(db, "hook").every((r) => r.delivered_at === null)).toBe(true);
    } finally {
      await receiver.close();
    }
  });

  it("two check --notify runs at once (cron beside the daemon) deliver each alert once", async () => {
    const db = await copySqliteStore(synced);
    const receiver = await startReceiver("gate");
    try {
      const env = simEnv(sim, db, { FLAGTRAIL_CONFIG: hookConfig(db, receiver.url), HOOK_SECRET: SECRET });
      // Find them first, so that both runs only deliver.
      await runCliInProcess(["check", "--from", daysAgo(3), "--format", "json"], { env });
      const args = ["check", "--from", daysAgo(3), "--notify", "--format", "json"];
      const first = runCli(args, { env });
      await waitUntil(() => receiver.requests.length === 1, "the first run's first alert");
      // The first run holds its request open at the receiver, so it is delivering: the second skips.
      const second = await runCli(args, { env });
      expect(second.stderr).toContain('Note: sink "hook" is being delivered by another run');
      expect(second.stderr).not.toContain("undelivered");
      expect(second.code).toBe(1); // the findings, not the alerts
      expect(receiver.requests).toHaveLength(1);
      receiver.open();
      const done = await first;
      expect(done.code).toBe(1);
      expect(done.stderr).not.toContain("undelivered");
      // README: "--notify alerts the sinks … once"; before, 402 of 402 alerts arrived twice.
      const keys = receiver.requests.map((r) => r.key).sort();
      expect(keys).toHaveLength(PLANTED);
      expect(new Set(keys).size).toBe(PLANTED);
    } finally {
      await receiver.close();
    }
  });

  it("two export --sink runs at once send each record's event once", async () => {
    const db = await copySqliteStore(synced);
    const receiver = await startReceiver("gate");
    try {
      const config = writeConfig(db, "siem.json", {
        sinks: [{ name: "siem", kind: "http", url: receiver.url, batchSize: 50, retries: 0 }],
      });
      const env = simEnv(sim, db, { FLAGTRAIL_CONFIG: config });
      const first = runCli(["export", "--sink", "siem"], { env });
      await waitUntil(() => receiver.requests.length === 1, "the first run's first batch");
      const second = await runCli(["export", "--sink", "siem"], { env });
      expect(second.code, second.stderr).toBe(0);
      expect(second.stderr).toContain(
        'Note: sink "siem" is being delivered by another run (project default)',
      );
      expect(second.stdout).toContain("Sent 0 events and 0 findings");
      expect(receiver.requests).toHaveLength(1);
      receiver.open();
      const done = await first;
      expect(done.code, done.stderr).toBe(0);
      const sent = Number(/Sent (\d+) events/.exec(done.stdout)?.[1]);
      const ids = receiver.requests.flatMap((r) =>
        r.lines.map((l) => (JSON.parse(l) as { unmapped: { event_id: string } }).unmapped.event_id),
      );
      // Before: 6004 events for 3002 records.
      expect(sent).toBeGreaterThan(200);
      expect(ids).toHaveLength(sent);
      expect(new Set(ids).size).toBe(sent);
    } finally {
      await receiver.close();
    }
  });

  it("doctor warns about a multi-project store's project file readable by others", async () => {
    const db = tempDbPath("flagtrail-h47-projects-");
    const entry = { apiKeyEnv: "TRIAL_KEY", baseUrl: sim.url, authHeader: sim.settings.authHeader };
    const config = writeConfig(db, "projects.json", { projects: { web: entry, mobile: entry } });
    const env = simEnv(sim, db, { FLAGTRAIL_CONFIG: config, TRIAL_KEY: sim.settings.apiKey });
    const sync = await runCliInProcess(["sync", "--since", daysAgo(3), "--quiet"], { env });
    expect(sync.code, sync.stderr).toBe(0);
    // docs/projects.md: project web's history lives in flagtrail.web.db beside the store's file.
    const projectFile = join(dirname(db), "flagtrail.web.db");
    chmodSync(projectFile, 0o644);
    const doctor = await runCliInProcess(["doctor", "--json"], { env });
    const modes = (JSON.parse(doctor.stdout) as { name: string; status: string; detail: string }[]).find(
      (c) => c.name === "file modes",
    );
    expect(modes?.status).toBe("warn");
    expect(modes?.detail).toContain("flagtrail.web.db");
  });

  it("export leaves out OCSF attributes without a value instead of writing null", async () => {
    const result = await runCliInProcess(["export"], { env: simEnv(sim, synced) });
    expect(result.code, result.stderr).toBe(0);
    const nulls = new Set<string>();
    const walk = (value: unknown, path: string): void => {
      if (value === null) nulls.add(path);
      else if (Array.isArray(value)) for (const item of value) walk(item, `${path}[]`);
      else if (typeof value === "object") for (const [k, v] of Object.entries(value)) walk(v, `${path}.${k}`);
    };
    const events = result.stdout.trim().split("\n");
    for (const line of events) walk(JSON.parse(line), "");
    expect(events.some((line) => line.includes('"entity_result"'))).toBe(true);
    // docs/export.md: "Attributes without a value are left out rather than null."
    expect([...nulls]).toEqual([]);
  });
});
