// A finding row as check stores it (review-required on a gate), for the store-level controls tests.
import type { NewFinding } from "../../src/store/controls/findings.ts";

export const reviewFinding = (id: string): NewFinding => ({
  id: `rr:${id}`,
  control_id: "rr",
  kind: "review-required",
  severity: "high",
  record_id: id,
  entity: "gate",
  action_type: "gate_update",
  occurred_at: 1_700_000_000_000,
  actor: "Alice",
  message: "change without an approved review before it",
});
