// One outbox row that cannot be read (its payload not JSON, or not a finding) fails alone, with an error
// that says so, on every delivery (waitingAlerts, and so `check --notify`, shows it), and the other rows
// are delivered: before, it made every run fail, for every alert sink and for its SIEM sink's batch.
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { parseControlsConfig, type SiemSink, type Sink } from "../../src/controls/config.ts";
import { deliverAlerts } from "../../src/controls/deliver.ts";
import { deliverToSink } from "../../src/export/sinks/deliver.ts";
import { type NewFinding, writeCheck } from "../../src/store/controls/findings.ts";
import { waitingAlerts } from "../../src/store/controls/outbox.ts";
import { closeProjectStores, openStoreProjects, type ProjectStore } from "../../src/store/projectStores.ts";
import { queriesOf, sql } from "../../src/store/query.ts";
import { runCliInProcess } from "../helpers/inProcessCli.ts";
import { type NdjsonReceiver, startNdjson } from "../sinks/receivers.ts";
import { alertFinding, alertPayload } from "./findingRows.ts";

const finding = (n: number): NewFinding => alertFinding(n);

const payloadOf = (f: NewFinding) => alertPayload(f, "2026-11-21T00:00:00.000+00:00");

let parts: ProjectStore[];
let dir: string;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), "flagtrail-outbox-"));
  parts = await openStoreProjects(join(dir, "flagtrail.db"));
});

afterEach(async () => {
  await closeProjectStores(parts);
});

/** Queues findings 1–3 for `sink`, then spoils the payloads of 2 (not JSON) and 3 (`bad3`). */
async function plantWithBadRows(sink: string, bad3: string): Promise<void> {
  const store = parts[0]!.store;
  await writeCheck(store, {
    checkedAt: Date.now(),
    periodStart: 0,
    periodEnd: Date.now(),
    lastSeq: 0,
    periodGiven: false,
    findings: [finding(1), finding(2), finding(3)],
    tickets: [],
    alertsFor: (f) => [{ sink, payload: payloadOf(f) }],
  });
  const q = await queriesOf(store);
  await q.run(
    sql`UPDATE control_outbox SET payload = ${'{"event":"finding","finding":'} WHERE finding_id = 'rr:rec2'`,
  );
  await q.run(sql`UPDATE control_outbox SET payload = ${bad3} WHERE finding_id = 'rr:rec3'`);
}

async function outbox() {
  const q = await queriesOf(parts[0]!.store);
  const rows = await q.all<{
    finding_id: string;
    attempts: number;
    delivered: number;
    last_error: string | null;
  }>(
    sql`SELECT finding_id, attempts, CASE WHEN delivered_at IS NULL THEN 0 ELSE 1 END AS delivered, last_error
        FROM control_outbox ORDER BY finding_id`,
  );
  return rows.map((r) => [r.finding_id, Number(r.attempts), Number(r.delivered), r.last_error]);
}

const NOT_JSON = "the outbox row of finding rr:rec2 cannot be read (its payload is not JSON)";

describe("an unreadable outbox row", () => {
  it("to an alert sink: fails alone, says why on every run; the others are delivered", async () => {
    const log = join(dir, "received.jsonl");
    const recorder = join(dir, "recorder.mjs");
    writeFileSync(
      recorder,
      `import { appendFileSync } from "node:fs";
       let input = "";
       process.stdin.setEncoding("utf8").on("data", (c) => { input += c; }).on("end", () => {
         appendFileSync(process.argv[2], input + "\\n");
       });`,
    );
    const sinks: Sink[] = parseControlsConfig(
      JSON.stringify({
        sinks: [
          {
            name: "pager",
            kind: "exec",
            command: process.execPath,
            args: [recorder, log],
            backoffSeconds: 0,
          },
        ],
      }),
      "test.json",
    ).sinks;
    await plantWithBadRows("pager", '{"event":"finding"}');
    const store = parts[0]!.store;
    expect(await deliverAlerts(store, sinks, Date.now())).toEqual({ delivered: 1, failed: 2 });
    const received = () =>
      existsSync(log)
        ? readFileSync(log, "utf8")
            .trim()
            .split("\n")
            .map((l) => JSON.parse(l).finding.id)
        : [];
    expect(received()).toEqual(["rr:rec1"]);
    const noFinding = "the outbox row of finding rr:rec3 cannot be read (its payload holds no finding)";
    expect(await outbox()).toEqual([
      ["rr:rec1", 1, 1, null],
      ["rr:rec2", 1, 0, NOT_JSON],
      ["rr:rec3", 1, 0, noFinding],
    ]);
    // Not retried silently: each run fails it again, and what waits says why.
    expect(await deliverAlerts(store, sinks, Date.now())).toEqual({ delivered: 0, failed: 2 });
    expect((await outbox()).map((r) => r[1])).toEqual([1, 2, 2]);
    const waiting = await waitingAlerts(store);
    expect(waiting.map((w) => [w.sink, Number(w.waiting)])).toEqual([["pager", 2]]);
    expect([NOT_JSON, noFinding]).toContain(waiting[0]!.lastError);
    expect(received()).toEqual(["rr:rec1"]);
    // `status` says so too.
    const status = await runCliInProcess(["status", "--db", join(dir, "flagtrail.db")]);
    expect(status.stdout.split("\n").filter((l) => l.startsWith("Alerts:"))).toEqual([
      `Alerts: 2 undelivered (sink "pager" 2, last error: ${waiting[0]!.lastError})`,
    ]);
    const json = await runCliInProcess(["status", "--db", join(dir, "flagtrail.db"), "--json"]);
    expect(JSON.parse(json.stdout).controls.undelivered).toEqual([
      { sink: "pager", alerts: 2, lastError: waiting[0]!.lastError },
    ]);
  });

  it("to a SIEM sink: fails alone; the rest of its batch is delivered and the delivery does not throw", async () => {
    const receiver: NdjsonReceiver = await startNdjson();
    try {
      const sink = parseControlsConfig(
        JSON.stringify({
          sinks: [
            { name: "siem", kind: "http", url: receiver.url, format: "raw", retries: 0, backoffSeconds: 0 },
          ],
        }),
        "test.json",
      ).sinks[0] as SiemSink;
      // Row 3 is JSON with a finding, but not one the events can be made from (no such severity).
      await plantWithBadRows("siem", payloadOf(finding(3)).replace('"high"', '"urgent"'));
      expect(await deliverToSink(parts[0]!, sink, { findingsOnly: true })).toEqual({
        events: 0,
        findings: 1,
      });
      const sent = receiver.requests.flatMap((r) => r.lines.map((l) => JSON.parse(l).id));
      expect(sent).toEqual(["rr:rec1"]);
      expect(await outbox()).toEqual([
        ["rr:rec1", 1, 1, null],
        ["rr:rec2", 1, 0, NOT_JSON],
        [
          "rr:rec3",
          1,
          0,
          "the outbox row of finding rr:rec3 cannot be read (its finding is not one flagtrail wrote)",
        ],
      ]);
    } finally {
      await receiver.close();
    }
  });
});
