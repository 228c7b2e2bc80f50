import { describe, expect, it } from "vitest";
import { pairApprovals, type ReviewRecord, reviewIdOf } from "../../src/report/reviewPairing.ts";
import { juneComplianceMarkdown, makeRecord, markdownSection } from "./fixtures.ts";

const RAVI = { updatedBy: "Ravi Menon", updatedByUserID: "raviUserId0000000001", modifierEmail: "r@x.io" };
const BOT = {
  updatedBy: "Deploy Bot | CI",
  updatedByUserID: "botUserId00000000002",
  modifierEmail: "b@x.io",
};
const CHLOE = { updatedBy: "Chloé Martin", updatedByUserID: "chloeUserId000000003", modifierEmail: "c@x.io" };
const AIKO = { updatedBy: "Aiko Tanaka", updatedByUserID: "aikoUserId0000000004", modifierEmail: "a@x.io" };

const at = (d: number, h: number) => Date.UTC(2024, 5, d, h);

const reportMarkdown = juneComplianceMarkdown;
const selfSection = (md: string) => markdownSection(md, "Reviews approved by their own author");

describe("self-approval (report)", () => {
  it("pairs by review id: no false accusation, no missed self-approval", async () => {
    const md = await reportMarkdown([
      // Cart button: Ravi asks (qSzyrzfG), then the bot asks (oTDvAw6k); the bot accepts Ravi's.
      makeRecord({
        at: at(3, 9),
        name: "Cart button",
        actionType: "experiment_review_create",
        changeLog: "Requested review qSzyrzfG",
        ...RAVI,
      }),
      makeRecord({
        at: at(3, 10),
        name: "Cart button",
        actionType: "experiment_review_create",
        changeLog: "Requested review oTDvAw6k",
        ...BOT,
      }),
      makeRecord({
        at: at(3, 11),
        name: "Cart button",
        actionType: "experiment_review_accept",
        changeLog: "Accepted review qSzyrzfG requested by Ravi Menon",
        ...BOT,
      }),
      // Profile modal: Chloé asks (r4C6sUPL), Aiko asks (PEaGp9Ib), Chloé accepts her own.
      makeRecord({
        at: at(4, 9),
        name: "Profile modal",
        actionType: "experiment_review_create",
        changeLog: "Requested review r4C6sUPL",
        ...CHLOE,
      }),
      makeRecord({
        at: at(4, 10),
        name: "Profile modal",
        actionType: "experiment_review_create",
        changeLog: "Requested review PEaGp9Ib",
        ...AIKO,
      }),
      makeRecord({
        at: at(4, 11),
        name: "Profile modal",
        actionType: "experiment_review_accept",
        changeLog: "Accepted review r4C6sUPL requested by Chloé Martin",
        ...CHLOE,
      }),
    ]);
    const section = selfSection(md);
    expect(section).toContain("| Profile modal | experiment\\_review\\_accept | Chloé Martin |");
    expect(section).not.toContain("Cart button");
    expect(section).not.toContain("Deploy Bot");
  });
});

function rec(seq: number, role: ReviewRecord["role"], user: string, changeLog: string | null): ReviewRecord {
  return {
    seq,
    id: `id${seq}`,
    occurred_at: seq * 1000,
    name: "gate",
    entity: "config",
    role,
    action_type:
      role === "request"
        ? "config_review_create"
        : role === "accept"
          ? "config_review_accept"
          : "config_review_reject",
    change_log: changeLog,
    updated_by: user,
    updated_by_user_id: user,
  };
}

describe("pairApprovals", () => {
  it("without ids, skips requests already closed by a reject or an accept", () => {
    const pairs = [
      ...pairApprovals([
        rec(1, "request", "alice", null),
        rec(2, "request", "bob", null),
        rec(3, "close", "carol", null), // rejects bob's, the latest open one
        rec(4, "accept", "alice", null), // so this approves alice's own request
      ]),
    ];
    expect(pairs.map((p) => [p.request.seq, p.accept.seq])).toEqual([[1, 4]]);
  });

  it("an approval naming an unknown review accuses nobody", () => {
    const pairs = [
      ...pairApprovals([
        rec(1, "request", "alice", "Requested review AAAA1111"),
        rec(2, "accept", "alice", "Accepted review BBBB2222"),
      ]),
    ];
    expect(pairs).toEqual([]);
  });

  it("reads review ids, not words", () => {
    expect(reviewIdOf("Accepted review qSzyrzfG requested by Ravi Menon")).toBe("qSzyrzfG");
    expect(reviewIdOf("Review requested")).toBeNull();
    expect(reviewIdOf("needs review before launch")).toBeNull();
    expect(reviewIdOf(null)).toBeNull();
  });
});
