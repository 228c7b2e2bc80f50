// A SIEM sink's records and findings are two streams: a record event the receiver can never take (too
// large alone: 413) stops the records at it, but must not silence the findings, the alerts. The daemon
// (`daemon --once`, its cycle's check and delivery) and `export --sink` sent a sink's findings only
// after all its records went, so while the record stayed no finding ever reached that sink; only
// `check --notify` (findings only) did. A real HTTP receiver on 127.0.0.1 refusing one record event.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ENGINES } from "../controls/engines.ts";
import { daysAgo } from "../helpers/simSync.ts";
import { eventIds, startIntake } from "./receivers.ts";
import { apiChangesTo, type SinkScenario, sinkScenario } from "./scenario.ts";

describe.each(ENGINES)("a record event stuck at a sink, on %s", (engine) => {
  let s: SinkScenario;
  /** The record event refused (413), and every event id taken, in order. */
  let poison = "";
  const taken: string[] = [];

  beforeAll(async () => {
    s = await sinkScenario(engine, {
      records: 40,
      receiver: await startIntake(({ text }) => {
        const ids = eventIds(text);
        if (ids.includes(poison)) return 413;
        taken.push(...ids);
        return 200;
      }),
      controls: [apiChangesTo("ctl_st_")],
      sinks: (url) => [
        { name: "siem", kind: "http", url: `${url}/in`, batchSize: 8, retries: 0, backoffSeconds: 0 },
      ],
    });
    await s.sync();
    const [first] = await s.store.query<{ id: string }>(
      "SELECT id FROM audit_logs ORDER BY seq LIMIT 1 OFFSET 2",
    );
    poison = `default:${first!.id}`;
  });

  afterAll(() => s?.close());

  const findingsTaken = () => taken.filter((id) => id.includes(":finding:")).sort();

  it("daemon --once: the finding goes, the stuck record is said", async () => {
    const id = s.plant("ctl_st_daemon");
    const once = await s.cli(["daemon", "--once", "--since", daysAgo(2), "--no-entities"]);
    expect(findingsTaken()).toEqual([`default:finding:ra:${id}`]);
    // The records before the stuck one went; the cycle says the sink failed, and why.
    expect(taken.filter((t) => !t.includes(":finding:"))).toHaveLength(2);
    expect(once.stderr).toMatch(
      /"sinksFailed":\[\{"sink":"siem","error":"sink \\"siem\\" did not take the events \(HTTP 413\)\."/,
    );
    const rows = await s.store.query<{ delivered_at: number | null }>(
      "SELECT delivered_at FROM control_outbox",
    );
    expect(rows.map((r) => r.delivered_at !== null)).toEqual([true]);
  });

  it("export --sink: the new finding goes, then the refusal is the one sentence", async () => {
    const id = s.plant("ctl_st_export");
    await s.sync();
    const check = await s.cli(["check"]);
    expect(check.code, check.stderr).toBe(1);
    const sent = await s.cli(["export", "--sink", "siem"]);
    expect(sent.code).toBe(1);
    expect(sent.stderr).toMatch(/did not take the events \(HTTP 413\)/);
    expect(findingsTaken()).toContain(`default:finding:ra:${id}`);
  });
});
