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

/** Finding `n` of the alert tests (review-required on a gate), as check stores it; `fields` override. */
export const alertFinding = (n: number, fields: Partial<NewFinding> = {}): NewFinding => ({
  id: `rr:rec${n}`,
  control_id: "rr",
  kind: "review-required",
  severity: "high",
  record_id: `rec${n}`,
  entity: `checkout_gate_${n}`,
  action_type: "gate_update",
  occurred_at: Date.parse("2026-11-20T03:04:05Z"),
  actor: "Dana Lee",
  message: "change without an approved review before it",
  ...fields,
});

/** The body `check` queues for it: the finding as `check --format json` prints it. */
export const alertPayload = (f: NewFinding, firstSeenAt = "2026-11-20T03:05:00.000+00:00"): string =>
  JSON.stringify({
    event: "finding",
    finding: {
      id: f.id,
      control: f.control_id,
      kind: f.kind,
      severity: f.severity,
      project: "default",
      recordId: f.record_id,
      entity: f.entity,
      actionType: f.action_type,
      occurredAt: "2026-11-20T03:04:05.000+00:00",
      actor: f.actor,
      message: f.message,
      firstSeenAt,
      waiver: null,
    },
  });
