// The record controls' approval lookups: an index by entity, not a scan of every approval per change
// (issue 23: quadratic on a large month), with the same answers as the scan.
import { describe, expect, it } from "vitest";
import { parseControlsConfig } from "../../src/controls/config.ts";
import { type ControlInputs, evaluate } from "../../src/controls/evaluate.ts";
import type { ReviewPair } from "../../src/report/reviewPairing.ts";
import type { ReviewRecord } from "../../src/store/reportQueries.ts";

type Change = ControlInputs["changes"][number];

const HOUR = 3_600_000;
const START = Date.UTC(2023, 5, 5); // a Monday

const controls = parseControlsConfig(
  JSON.stringify({
    controls: [
      { id: "sa", kind: "no-self-approval", severity: "high" },
      { id: "tk", kind: "ticket-reference", severity: "low", pattern: "FT-\\d+" },
      {
        id: "cw",
        kind: "change-window",
        severity: "medium",
        days: ["mon", "tue", "wed", "thu", "fri"],
        hours: "08:00-18:00",
        zone: "UTC",
        emergencyPattern: "EMERGENCY",
      },
    ],
  }),
  "test",
).controls;

function record(
  role: ReviewRecord["role"],
  name: string,
  at: number,
  user: string,
  log: string,
): ReviewRecord {
  const type = role === "request" ? "config_review_create" : "config_review_accept";
  return {
    seq: at,
    id: `${role}-${name}-${at}`,
    occurred_at: at,
    name,
    entity: "config",
    role,
    action_type: type,
    change_log: log,
    updated_by: user,
    updated_by_user_id: user,
  };
}

function change(name: string, at: number, user: string, log: string): Change {
  return {
    id: `c-${name}-${at}`,
    occurred_at: at,
    name,
    category: "config_edit",
    action_type: "config_conditions_update",
    updated_by: user,
    updated_by_user_id: user,
    change_log: log,
  };
}

function pair(name: string, at: number, approver: string, log: string): ReviewPair {
  return {
    request: record("request", name, at - HOUR, "requester", "review requested"),
    accept: record("accept", name, at, approver, log),
  };
}

function inputsOf(changes: Change[], pairs: readonly ReviewPair[]): ControlInputs {
  return {
    now: START + 30 * 86_400_000,
    start: START,
    end: START + 7 * 86_400_000,
    changes,
    unreviewed: [],
    pairs,
    lastSyncAt: null,
    gapDays: [],
    integrityFailure: null,
  };
}

/** `pairs` behind a proxy that counts how often an element is read. */
function counted(pairs: ReviewPair[]): { pairs: readonly ReviewPair[]; reads: () => number } {
  let reads = 0;
  const proxy = new Proxy(pairs, {
    get(target, key, receiver) {
      if (typeof key === "string" && /^\d+$/.test(key)) reads += 1;
      return Reflect.get(target, key, receiver);
    },
  });
  return { pairs: proxy, reads: () => reads };
}

describe("the record controls' approval lookups", () => {
  it("read each approval a bounded number of times, not once per change", () => {
    const entities = 200;
    const pairs: ReviewPair[] = [];
    const changes: Change[] = [];
    for (let e = 0; e < entities; e += 1) {
      pairs.push(pair(`entity_${e}`, START + 9 * HOUR, "approver", "approved FT-1"));
      changes.push(change(`entity_${e}`, START + 10 * HOUR, "someone", "no ticket"));
      changes.push(change(`entity_${e}`, START + 20 * HOUR, "someone", "EMERGENCY fix"));
    }
    const { pairs: proxied, reads } = counted(pairs);
    const inputs = inputsOf(changes, proxied);
    for (const control of controls) evaluate(control, inputs);
    // A scan per change reads 2 × 200 changes × 200 approvals per control; an index reads each a few times.
    expect(reads()).toBeLessThanOrEqual(pairs.length * controls.length * 2);
  });

  it("answer as the scan did: the latest approval of the entity in order, the approval after an emergency", () => {
    const pairs = [
      pair("a", START + 8 * HOUR, "approver", "approved FT-1"),
      pair("b", START + 8 * HOUR, "bob", "approved"),
      pair("a", START + 9 * HOUR, "alice", "approved FT-2"),
      pair("c", START + 26 * HOUR, "approver", "approved later"),
    ];
    const changes = [
      change("a", START + 10 * HOUR, "alice", "edit"),
      change("b", START + 10 * HOUR, "carol", "edit"),
      change("c", START + 20 * HOUR, "dan", "EMERGENCY fix"),
      change("d", START + 20 * HOUR, "dan", "EMERGENCY fix"),
    ];
    const inputs = inputsOf(changes, pairs);
    const [sa, tk, cw] = controls.map((c) => evaluate(c, inputs));
    expect(sa!.drafts.map((d) => d.key)).toEqual([changes[0]!.id]);
    expect(tk!.tickets).toEqual([{ recordId: changes[0]!.id, ticket: "FT-2" }]);
    expect(tk!.drafts.map((d) => d.key)).toEqual([changes[1]!.id, changes[2]!.id, changes[3]!.id]);
    expect(cw!.drafts.map((d) => d.key)).toEqual([changes[3]!.id]);
  });
});

describe("a change window past midnight", () => {
  it("runs from its start on one of its days to its end on the day after", () => {
    const [night] = parseControlsConfig(
      JSON.stringify({
        controls: [
          {
            id: "night",
            kind: "change-window",
            severity: "low",
            days: ["fri"],
            hours: "22:00-06:00",
            zone: "UTC",
          },
        ],
      }),
      "test",
    ).controls;
    const friday = START + 4 * 86_400_000; // START is a Monday
    const at = (hours: number) => change("gate", friday + hours * HOUR, "ops", "edit");
    const changes = [at(23), at(24 + 5), at(24 + 7), at(21), at(3), at(3 * 24 + 2)];
    const drafts = evaluate(night!, inputsOf(changes, [])).drafts.map((d) => d.key);
    // Inside: Friday 23:00 and Saturday 05:00. Outside: Saturday 07:00, Friday 21:00, Friday 03:00 (the
    // window of Thursday night, not one of its days), Monday 02:00.
    expect(drafts).toEqual([changes[2]!.id, changes[3]!.id, changes[4]!.id, changes[5]!.id]);
  });
});

describe("the completeness control", () => {
  const [complete] = parseControlsConfig(
    JSON.stringify({ controls: [{ id: "c", kind: "completeness", severity: "high" }] }),
    "test",
  ).controls;

  it("fails closed on a store without a dated record (no server day to reconcile), like the report's 'Not checked'", () => {
    const result = evaluate(complete!, { ...inputsOf([], []), gapDays: null });
    expect(result.drafts.map((d) => [d.key, d.message])).toEqual([
      ["no-dated-records", "the period cannot be checked: the store holds no dated record"],
    ]);
  });

  it("finds each unreconciled server day, and nothing when every day is reconciled", () => {
    const days = ["2023-06-05", "2023-06-07"];
    expect(evaluate(complete!, { ...inputsOf([], []), gapDays: days }).drafts.map((d) => d.key)).toEqual([
      "day-2023-06-05",
      "day-2023-06-07",
    ]);
    expect(evaluate(complete!, inputsOf([], [])).drafts).toEqual([]);
  });
});

describe("the sync-freshness control while a sync runs", () => {
  const [fresh] = parseControlsConfig(
    JSON.stringify({ controls: [{ id: "f", kind: "sync-freshness", severity: "high", maxAgeHours: 6 }] }),
    "test",
  ).controls;
  const now = START + 30 * 86_400_000;
  const judged = (lastSyncAt: number | null, syncRunningSince: number | null) =>
    evaluate(fresh!, { ...inputsOf([], []), now, lastSyncAt, syncRunningSince }).drafts.map((d) => [
      d.key,
      d.message,
    ]);

  it("a first backfill under way for less than the age is no finding; longer, it says it still runs", () => {
    expect(judged(null, now - 5 * HOUR)).toEqual([]);
    expect(judged(null, now - 7 * HOUR)).toEqual([
      [
        "sync-never",
        `no sync has ever succeeded; a sync running since ${new Date(now - 7 * HOUR).toISOString().replace("Z", "+00:00")} has not finished`,
      ],
    ]);
    // No sync running: stale as before, keyed by the last sync whatever the message says.
    const last = now - 8 * HOUR;
    expect(judged(last, null).map(([key]) => key)).toEqual([`sync-${new Date(last).toISOString()}`]);
    expect(judged(last, now - HOUR)).toEqual([]);
  });
});
