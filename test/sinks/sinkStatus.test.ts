// `flagtrail status` on a SIEM sink: how far its records went (cursor: seq and time of the last record
// the receiver acknowledged, how many are behind), the findings waiting for it, and that it is stuck on a
// record event the receiver refuses for good, and why. Before, only the daemon's log and `export --sink`'s
// exit code said so. A real HTTP receiver on 127.0.0.1 refusing one record event (413), its url carrying
// a token that status must not show.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ENGINES } from "../controls/engines.ts";
import { eventIds, startIntake } from "./receivers.ts";
import { apiChangesTo, type SinkScenario, sinkScenario } from "./scenario.ts";

const TOKEN = "sinktoken-do-not-show-4711";

interface SinkJson {
  sink: string;
  delivered: { seq: number; occurredAt: string | null; at: string } | null;
  behind: number;
  findingsWaiting: number;
  stuck: { afterSeq: number; since: string; reason: string } | null;
}

describe.each(ENGINES)("status of a stuck SIEM sink, on %s", (engine) => {
  let s: SinkScenario;
  /** The record event refused (413) while set. */
  let poison = "";

  beforeAll(async () => {
    s = await sinkScenario(engine, {
      records: 30,
      days: 4,
      receiver: await startIntake(({ text }) =>
        poison !== "" && eventIds(text).includes(poison) ? 413 : 200,
      ),
      controls: [apiChangesTo("ctl_ss_")],
      sinks: (url) => [
        {
          name: "siem",
          kind: "http",
          url: `${url}/in?token=${TOKEN}`,
          batchSize: 8,
          retries: 0,
          backoffSeconds: 0,
        },
      ],
    });
    await s.sync();
    const [third] = await s.store.query<{ id: string }>(
      "SELECT id FROM audit_logs ORDER BY seq LIMIT 1 OFFSET 2",
    );
    poison = `default:${third!.id}`;
  });

  afterAll(() => s?.close());

  /** A change by the restricted actor, synced and checked: one new finding queued for the sink. */
  async function newFinding(name: string): Promise<void> {
    s.plant(name);
    await s.sync();
    expect((await s.cli(["check"])).code).toBe(1);
  }

  async function status(): Promise<{ text: string; sinks: SinkJson[] }> {
    const text = await s.cli(["status"]);
    expect(text.code, text.stderr).toBe(0);
    const json = await s.cli(["status", "--json"]);
    expect(json.code, json.stderr).toBe(0);
    for (const out of [text.stdout, json.stdout]) {
      expect(out).not.toContain(TOKEN);
      expect(out).not.toContain("/in?");
    }
    return { text: text.stdout, sinks: (JSON.parse(json.stdout) as { sinks: SinkJson[] }).sinks };
  }

  const total = async () =>
    Number((await s.store.query<{ n: number }>("SELECT count(*) AS n FROM audit_logs"))[0]!.n);
  const seqOf = async (offset: number) =>
    Number(
      (
        await s.store.query<{ seq: number }>(
          `SELECT seq FROM audit_logs ORDER BY seq LIMIT 1 OFFSET ${offset}`,
        )
      )[0]!.seq,
    );

  it("shows the cursor, the findings waiting and the stuck record with its reason; clear once it goes", async () => {
    // Never delivered: listed from the config, everything behind (test/commands/statusConfiguredSinks).
    expect((await status()).sinks).toEqual([
      { sink: "siem", delivered: null, behind: await total(), findingsWaiting: 0, stuck: null },
    ]);

    const sent = await s.cli(["export", "--sink", "siem"]);
    expect(sent.code).toBe(1);
    expect(sent.stderr).toMatch(/did not take the events \(HTTP 413\)/);
    await newFinding("ctl_ss_one");

    const second = await seqOf(1);
    const stuck = await status();
    expect(stuck.sinks).toEqual([
      {
        sink: "siem",
        delivered: { seq: second, occurredAt: expect.stringMatching(/Z$/), at: expect.stringMatching(/Z$/) },
        behind: (await total()) - 2,
        findingsWaiting: 1,
        stuck: {
          afterSeq: second,
          since: expect.stringMatching(/Z$/),
          reason: "did not take the events (HTTP 413)",
        },
      },
    ]);
    const [line, why] = stuck.text.split("SIEM sinks:\n")[1]!.split("\n");
    expect(line).toBe(
      `  sink "siem": records delivered to seq ${second} (the last occurred ${stuck.sinks[0]!.delivered!.occurredAt}, acknowledged ${stuck.sinks[0]!.delivered!.at}), ${(await total()) - 2} behind; 1 finding waiting`,
    );
    expect(why).toMatch(
      new RegExp(
        `^ {4}stuck since \\S+Z after seq ${second}, refused for good: did not take the events \\(HTTP 413\\); each delivery`,
      ),
    );
    const meta = await s.store.query<{ value: string }>(
      "SELECT value FROM meta WHERE key = 'sink.stuck:siem'",
    );
    expect(meta).toHaveLength(1);
    expect(meta[0]!.value).not.toContain(TOKEN);

    // The receiver takes the event now: everything goes, the sink is no longer stuck.
    poison = "";
    const again = await s.cli(["export", "--sink", "siem"]);
    expect(again.code, again.stderr).toBe(0);
    const clear = await status();
    expect(clear.sinks).toEqual([
      expect.objectContaining({ sink: "siem", behind: 0, findingsWaiting: 0, stuck: null }),
    ]);
    expect(clear.sinks[0]!.delivered!.seq).toBe(await seqOf((await total()) - 1));
    expect(clear.text).not.toContain("stuck");
  });
});
