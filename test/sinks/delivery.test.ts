// Delivery to the SIEM sinks through the real CLI and store, on both engines: a cursor per sink,
// advanced only on the receiver's acknowledgement; the findings through the outbox as OCSF Detection
// Findings; a refused token leaves the cursor; kill -9 mid-delivery repeats at most the batch that was
// not acknowledged; rsyslog receives every record whole, as OCSF JSON. The CLI runs in this process
// (test/helpers/inProcessCli.ts), but for the cycle killed with -9 and, on the first engine, the refused
// token's sentence: those are real processes, end to end.
import type { ChildProcess } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseControlsConfig, type SiemSink } from "../../src/controls/config.ts";
import { deliverToSink } from "../../src/export/sinks/deliver.ts";
import type { RunningSimulator } from "../../src/simulator/index.ts";
import { readCursor } from "../../src/store/export/cursors.ts";
import { closeProjectStores, openStoreProjects } from "../../src/store/projectStores.ts";
import { ENGINES, type TestStore, testStore } from "../controls/engines.ts";
import { API, BOT } from "../controls/plant.ts";
import { runCliInProcess } from "../helpers/inProcessCli.ts";
import { runCli } from "../helpers/runCli.ts";
import { daysAgo, simEnv, startTestSimulator } from "../helpers/simSync.ts";
import { ensureRsyslog, type HecReceiver, startHec, startRsyslog, until } from "./receivers.ts";

const TOKEN = "hec-token-delivery-91e2";
const CONTROL = {
  id: "ra",
  kind: "restricted-actor",
  severity: "high",
  entityPattern: "^ctl_ra_",
  actors: ["CONSOLE API", BOT.id],
};

function hecSink(url: string, extra: Record<string, unknown> = {}) {
  return {
    name: "splunk",
    kind: "splunk-hec",
    url,
    tokenEnv: "HEC_TOKEN",
    retries: 0,
    backoffSeconds: 0,
    batchSize: 40,
    ...extra,
  };
}

/** How many times each id arrived. */
function counts(ids: string[]): Map<string, number> {
  const map = new Map<string, number>();
  for (const id of ids) map.set(id, (map.get(id) ?? 0) + 1);
  return map;
}

describe.each(ENGINES)("SIEM sinks on %s", (engine) => {
  let sim: RunningSimulator;
  let store: TestStore;
  let env: Record<string, string>;
  const receivers: HecReceiver[] = [];

  const recordIds = async () =>
    (await store.query<{ id: string }>("SELECT id FROM audit_logs ORDER BY seq")).map(
      (r) => `default:${r.id}`,
    );
  /** A daemon cycle in this process; with `onSpawn`, in a process of its own (to be killed). */
  const cycle = (config: string, onSpawn?: (child: ChildProcess) => void) => {
    const args = ["daemon", "--once", "--since", daysAgo(11)];
    const cycleEnv = { ...env, FLAGTRAIL_CONFIG: config };
    return onSpawn ? runCli(args, { env: cycleEnv, onSpawn }) : runCliInProcess(args, { env: cycleEnv });
  };
  /** The sink's cursor, read in-process as the delivery reads it. */
  const withParts = async <T>(
    fn: (part: {
      project: string;
      store: Awaited<ReturnType<typeof openStoreProjects>>[number]["store"];
    }) => Promise<T>,
  ) => {
    const parts = await openStoreProjects(store.db, { readonly: false });
    try {
      return await fn(parts[0]!);
    } finally {
      await closeProjectStores(parts);
    }
  };

  beforeAll(async () => {
    sim = await startTestSimulator({ records: 120, days: 10, timeZone: "UTC" });
    const day = Date.parse(`${daysAgo(2)}T00:00:00Z`);
    for (const [i, who] of [API, BOT].entries())
      sim.control.append([
        { at: day + (10 + i) * 3_600_000, name: `ctl_ra_${i}`, actionType: "gate_update", actor: who },
      ]);
    store = await testStore(engine);
    env = simEnv(sim, store.db, { HEC_TOKEN: TOKEN, HEC_BAD: "wrong-token-5521" });
  });

  afterAll(async () => {
    await sim?.close();
    for (const r of receivers) await r.close();
  });

  it("a collector busy for three cycles, then up, receives every record and finding once", async () => {
    const hec = await startHec(TOKEN);
    receivers.push(hec);
    hec.mode = "busy";
    const config = store.config({ controls: [CONTROL], sinks: [hecSink(hec.url)] });
    for (let n = 1; n <= 3; n += 1) {
      const result = await cycle(config);
      expect(result.code, result.stderr).toBe(0);
      expect(hec.posts).toHaveLength(n);
      expect(result.stderr).toContain("did not take the events (HTTP 503, Server is busy, code 9)");
      expect(result.stderr).not.toContain(TOKEN);
    }
    expect(await withParts((p) => readCursor(p.store, p.project, "sink:splunk"))).toBe(0);
    hec.mode = "up";
    const up = await cycle(config);
    expect(up.code).toBe(0);
    const ids = await recordIds();
    const records = hec.indexed.filter((e) => e.event.class_uid === 3004);
    const findings = hec.indexed.filter((e) => e.event.class_uid === 2004);
    expect(records.map((e) => e.fields.flagtrail_id)).toEqual(ids);
    expect(findings.map((e) => e.fields.flagtrail_id).sort()).toHaveLength(2);
    for (const f of findings) expect(f.fields.flagtrail_id).toMatch(/^default:finding:ra:/);
    for (const e of records) {
      expect(e.event).toMatchObject({
        class_uid: 3004,
        category_uid: 3,
        metadata: { uid: e.fields.flagtrail_id.slice(8) },
      });
      expect(e.event.type_uid).toBe(300400 + (e.event.activity_id as number));
    }
    expect(hec.posts.every((p) => p.gzipped)).toBe(true);
    const max = await store.query<{ seq: number }>("SELECT max(seq) AS seq FROM audit_logs");
    expect(await withParts((p) => readCursor(p.store, p.project, "sink:splunk"))).toBe(Number(max[0]!.seq));
    // Nothing new: nothing sent again.
    const posts = hec.posts.length;
    expect((await cycle(config)).code).toBe(0);
    expect(hec.posts).toHaveLength(posts);
    expect(counts(hec.indexed.map((e) => e.fields.flagtrail_id)).size).toBe(hec.indexed.length);
  }, 600_000);

  it("export --sink: a refused token is one sentence naming the sink, never the token, and leaves the cursor", async () => {
    const hec = receivers[0]!;
    sim.control.append([
      { at: Date.now() - 3_600_000, name: "late_gate", actionType: "gate_update", actor: API },
    ]);
    expect((await runCliInProcess(["sync", "--quiet"], { env })).code).toBe(0);
    const before = await withParts((p) => readCursor(p.store, p.project, "sink:splunk"));
    const send = (config: string, run = runCliInProcess) =>
      run(["export", "--sink", "splunk"], { env: { ...env, FLAGTRAIL_CONFIG: config } });
    // Spawned on the first engine (end to end), in this process on the other.
    const refused = await send(
      store.config({ sinks: [hecSink(hec.url, { tokenEnv: "HEC_BAD" })] }, "bad.json"),
      engine === ENGINES[0] ? runCli : runCliInProcess,
    );
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe(
      'flagtrail: sink "splunk" refused its credentials (HTTP 403, Invalid token, code 4).\n',
    );
    expect(refused.stdout).toBe("");
    expect(await withParts((p) => readCursor(p.store, p.project, "sink:splunk"))).toBe(before);
    // With its token again: only the new record.
    const indexed = hec.indexed.length;
    const sent = await send(store.config({ sinks: [hecSink(hec.url)] }, "good.json"));
    expect(sent.stdout).toBe('Sent 1 event and 0 findings to sink "splunk" (project default: 1).\n');
    expect(hec.indexed.slice(indexed).map((e) => e.event.entity)).toEqual([
      expect.objectContaining({ name: "late_gate" }),
    ]);
    expect(await withParts((p) => readCursor(p.store, p.project, "sink:splunk"))).toBeGreaterThan(before);
    const usage = await runCliInProcess(["export", "--sink", "splunk", "--out", "x.ndjson"], { env });
    expect(usage.code).toBe(2);
  }, 600_000);

  it("kill -9 mid-delivery, then a restart: no gap, repeats only within the unacknowledged batch", async () => {
    const hec = await startHec(TOKEN);
    receivers.push(hec);
    hec.stallFromAck = 3;
    const config = store.config(
      { sinks: [hecSink(hec.url, { name: "crash", batchSize: 10 })] },
      "crash.json",
    );
    let child: ChildProcess | undefined;
    const killed = cycle(config, (c) => {
      child = c;
    });
    await until(
      () => hec.posts.length >= 4 && hec.ackPolls >= 5,
      "the fourth batch to wait for its acknowledgement",
    );
    child!.kill("SIGKILL");
    expect((await killed).signal).toBe("SIGKILL");
    expect(hec.indexed).toHaveLength(30);
    hec.stallFromAck = Number.POSITIVE_INFINITY;
    const restarted = await cycle(config);
    expect(restarted.code, restarted.stderr).toBe(0);
    const ids = await recordIds();
    const received = counts(hec.received.map((e) => e.fields.flagtrail_id));
    expect([...received.keys()].sort()).toEqual([...ids].sort());
    const repeated = [...received].filter(([, n]) => n > 1).map(([id]) => id);
    // The fourth batch (records 31–40) was received but never acknowledged: only it came again.
    expect(repeated).toEqual(ids.slice(30, 40));
    expect([...received.values()].every((n) => n <= 2)).toBe(true);
  }, 600_000);

  const missing = ensureRsyslog(false);
  it.skipIf(missing !== null)(
    `rsyslog receives every record whole, as OCSF JSON${missing ? ` (skipped: ${missing})` : ""}`,
    async () => {
      const rsyslog = await startRsyslog(false);
      try {
        const sink = parseControlsConfig(
          JSON.stringify({
            sinks: [
              { name: "syslog", kind: "syslog", url: `tcp://127.0.0.1:${rsyslog.port}`, batchSize: 25 },
            ],
          }),
          "t.json",
        ).sinks[0] as SiemSink;
        const sent = await withParts((p) => deliverToSink(p, sink));
        const ids = await recordIds();
        expect(sent.events).toBe(ids.length);
        await until(() => rsyslog.lines().length >= ids.length, "rsyslog to write every record");
        const lines = rsyslog.lines();
        expect(lines).toHaveLength(ids.length);
        lines.forEach((line, i) => {
          const match = /^<\d+>1 \S+ \S+ flagtrail - ocsf \[flagtrail@32473 id="([^"]+)"\] (.*)$/.exec(line);
          expect(match, line.slice(0, 200)).not.toBeNull();
          expect(match![1]).toBe(ids[i]);
          const event = JSON.parse(match![2]!);
          expect(event).toMatchObject({
            class_uid: 3004,
            category_uid: 3,
            metadata: { uid: ids[i]!.slice(8) },
          });
        });
      } finally {
        await rsyslog.stop();
      }
    },
    300_000,
  );
});
