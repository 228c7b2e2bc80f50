// A SIEM sink that refuses its credentials (HTTP 401) refuses every event, the findings too. Going on to
// the findings after such a refusal of the records (as after an event refused alone, stuckRecord.test.ts)
// only marked each finding failed, run after run, its retry put off (backoff doubled, up to an hour): once
// the token was fixed the records went at the next run but the alerts waited. A real HTTP receiver on
// 127.0.0.1 refusing the token, then taking everything.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ENGINES } from "../controls/engines.ts";
import { eventIds, startIntake } from "./receivers.ts";
import { apiChangesTo, type SinkScenario, sinkScenario } from "./scenario.ts";

describe.each(ENGINES)("a SIEM sink refusing its token, on %s", (engine) => {
  let s: SinkScenario;
  let refuse = true;
  const taken: string[] = [];

  beforeAll(async () => {
    s = await sinkScenario(engine, {
      records: 20,
      receiver: await startIntake(({ text }) => {
        if (refuse) return 401;
        taken.push(...eventIds(text));
        return 200;
      }),
      controls: [apiChangesTo("ctl_tok_")],
      sinks: (url) => [
        {
          name: "siem",
          kind: "http",
          url: `${url}/in`,
          batchSize: 50,
          retries: 0,
          // A failed alert waits a minute before it is due again.
          backoffSeconds: 60,
        },
      ],
    });
  });

  afterAll(() => s?.close());

  it("export --sink: the finding waits untouched while the token is refused, and goes once it is taken", async () => {
    const id = s.plant("ctl_tok_a");
    await s.sync();
    const check = await s.cli(["check"]);
    expect(check.code, check.stderr).toBe(1);

    const refused = await s.cli(["export", "--sink", "siem"]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe('flagtrail: sink "siem" refused its credentials (HTTP 401).\n');
    // Not tried: the refusal was the sink's, not an event's; its retry is not put off.
    const [row] = await s.store.query<{ attempts: number; last_error: string | null }>(
      "SELECT attempts, last_error FROM control_outbox",
    );
    expect(row).toEqual({ attempts: 0, last_error: null });

    refuse = false;
    const sent = await s.cli(["export", "--sink", "siem"]);
    expect(sent.code, sent.stderr).toBe(0);
    expect(taken.filter((t) => t.includes(":finding:"))).toEqual([`default:finding:ra:${id}`]);
    expect(taken.filter((t) => !t.includes(":finding:")).length).toBeGreaterThan(0);
  });
});

// Splunk HEC answers HTTP 400 for an index the token may not write (code 7) or a missing or invalid channel
// (10, 11): a refusal of the sink's settings, every event refused alike, not of these events (code 6,
// invalid data format). A fake collector on 127.0.0.1 refusing the index, then taking everything.
describe.each(ENGINES)("a Splunk HEC sink refused its index (HTTP 400, code 7), on %s", (engine) => {
  let s: SinkScenario;
  let refuse = true;
  const taken: string[] = [];

  beforeAll(async () => {
    s = await sinkScenario(engine, {
      records: 20,
      receiver: await startIntake(({ text }) => {
        if (refuse)
          return { status: 400, json: { text: "Incorrect index", code: 7, "invalid-event-number": 0 } };
        for (const match of text.matchAll(/"flagtrail_id":"([^"]+)"/g)) taken.push(match[1]!);
        return { status: 200, json: { text: "Success", code: 0 } };
      }),
      controls: [apiChangesTo("ctl_idx_")],
      sinks: (url) => [
        {
          name: "splunk",
          kind: "splunk-hec",
          url,
          tokenEnv: "HEC_TOKEN",
          index: "audit",
          useAck: false,
          retries: 0,
          backoffSeconds: 60,
        },
      ],
      env: { HEC_TOKEN: "t0ken" },
    });
  });

  afterAll(() => s?.close());

  it("export --sink: the finding waits untouched while the index is refused, and goes once it is taken", async () => {
    const id = s.plant("ctl_idx_a");
    await s.sync();
    expect((await s.cli(["check"])).code).toBe(1);

    const refused = await s.cli(["export", "--sink", "splunk"]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe(
      'flagtrail: sink "splunk" did not take the events (HTTP 400, Incorrect index, code 7).\n',
    );
    const [row] = await s.store.query<{ attempts: number }>("SELECT attempts FROM control_outbox");
    expect(row?.attempts).toBe(0);

    refuse = false;
    const sent = await s.cli(["export", "--sink", "splunk"]);
    expect(sent.code, sent.stderr).toBe(0);
    expect(taken.filter((t) => t.includes(":finding:"))).toEqual([`default:finding:ra:${id}`]);
  });
});
