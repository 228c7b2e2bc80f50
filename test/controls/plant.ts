// The planted cases of the controls tests: records appended to a real simulator's history, each control
// scoped to its own entity prefix so that the generated history cannot add findings to it.
import type { RunningSimulator } from "../../src/simulator/index.ts";

const actor = (name: string, id: string) => ({ id, name, email: `${id}@example.com` });
export const ALICE = actor("Alice Ng", "aliceUser0000000001");
export const BOB = actor("Bob Okafor", "bobUser000000000002");
export const CAROL = actor("Carol Ruiz", "carolUser0000000003");
export const API = actor("CONSOLE API", "apiUser000000000004");
export const BOT = actor("Deploy Bot", "botUser000000000005");

const HOUR = 3_600_000;
const ALL_DAYS = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"];

export const CONTROLS = [
  { id: "rr", kind: "review-required", severity: "high", entityPattern: "^ctl_rr_" },
  { id: "sa", kind: "no-self-approval", severity: "high", entityPattern: "^ctl_sa_" },
  {
    id: "cw",
    kind: "change-window",
    severity: "medium",
    entityPattern: "^ctl_cw_",
    days: ALL_DAYS,
    hours: "08:00-18:00",
    zone: "UTC",
    emergencyPattern: "EMERGENCY",
    postReviewDays: 1,
  },
  {
    id: "tk",
    kind: "ticket-reference",
    severity: "low",
    entityPattern: "^ctl_tk_",
    pattern: "[A-Z][A-Z0-9]+-\\d+",
  },
  {
    id: "ra",
    kind: "restricted-actor",
    severity: "high",
    entityPattern: "^ctl_ra_",
    actors: ["CONSOLE API", BOT.id],
  },
  { id: "fresh", kind: "sync-freshness", severity: "medium", maxAgeHours: 24 },
  // 0.36 s: over by the time a second CLI process has started after the sync.
  { id: "stale", kind: "sync-freshness", severity: "low", maxAgeHours: 0.0001 },
  { id: "complete", kind: "completeness", severity: "high" },
  { id: "intact", kind: "integrity", severity: "high" },
];

export interface Planted {
  /** Per control id, the record ids it must find. */
  expected: Record<string, string[]>;
  /** Ticket keys a ticket-reference control must store, per record id. */
  tickets: Record<string, string>;
}

/** Appends the cases on the UTC day that starts at `day` (epoch ms); returns what must be found. */
export function plant(sim: RunningSimulator, day: number): Planted {
  const at = (h: number, m = 0) => day + h * HOUR + m * 60_000;
  const add = (h: number, name: string, actionType: string, who: typeof ALICE, changeLog = "", m = 0) =>
    sim.control.append([{ at: at(h, m), name, actionType, actor: who, changeLog }])[0]!.id;
  const review = (
    h: number,
    name: string,
    id: string,
    by: typeof ALICE,
    approver: typeof ALICE,
    log = "",
  ) => {
    add(h, name, "config_review_create", by, `Requested review ${id}${log}`);
    return add(
      h,
      name,
      "config_review_accept",
      approver,
      `Accepted review ${id} requested by ${by.name}`,
      30,
    );
  };
  // review-required: one change never reviewed, one after an approval.
  const rrBad = add(10, "ctl_rr_bad", "gate_update", ALICE);
  review(9, "ctl_rr_ok", "Rr0000001", BOB, CAROL);
  add(10, "ctl_rr_ok", "gate_update", BOB);
  // no-self-approval: Alice approves her own request; Bob approves Alice's.
  const saBad = review(11, "ctl_sa_bad", "Sa0000001", ALICE, ALICE);
  review(11, "ctl_sa_ok", "Sa0000002", ALICE, BOB);
  add(12, "ctl_sa_ok", "gate_update", ALICE);
  // …and Carol approves Bob's request, then makes the change herself.
  review(11, "ctl_sa_chg", "Sa0000003", BOB, CAROL);
  const saChange = add(12, "ctl_sa_chg", "gate_update", CAROL);
  // change-window (08:00-18:00 UTC): a night change, a day change, two emergencies (one reviewed after).
  const cwNight = add(3, "ctl_cw_night", "gate_update", ALICE);
  add(12, "ctl_cw_day", "gate_update", ALICE);
  add(2, "ctl_cw_emerg_ok", "gate_update", ALICE, "EMERGENCY rollback");
  review(5, "ctl_cw_emerg_ok", "Cw0000001", ALICE, BOB);
  const cwBad = add(2, "ctl_cw_emerg_bad", "gate_update", ALICE, "EMERGENCY hotfix");
  // ticket-reference: in the change log, in its review's request, nowhere.
  const tkOk = add(13, "ctl_tk_ok", "gate_update", ALICE, "Fix JIRA-12 rollout");
  review(13, "ctl_tk_rev", "Tk0000001", ALICE, BOB, " for OPS-7");
  const tkRev = add(14, "ctl_tk_rev", "gate_update", ALICE, "tweak");
  const tkBad = add(14, "ctl_tk_bad", "gate_update", ALICE, "tweak");
  // restricted-actor: by name, by user id, and an allowed person.
  const raApi = add(15, "ctl_ra_api", "gate_update", API);
  const raBot = add(15, "ctl_ra_bot", "gate_update", BOT);
  add(15, "ctl_ra_ok", "gate_update", ALICE);
  return {
    expected: {
      rr: [rrBad],
      sa: [saBad, saChange].sort(),
      cw: [cwNight, cwBad].sort(),
      tk: [tkBad],
      ra: [raApi, raBot].sort(),
    },
    tickets: { [tkOk]: "JIRA-12", [tkRev]: "OPS-7" },
  };
}
