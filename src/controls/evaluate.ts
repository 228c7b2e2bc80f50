// Control evaluation: pure functions from what the store holds for a period to findings. The reads
// are in ./inputs.ts; nothing here touches the store.
import type { ReviewPair } from "../report/reviewPairing.ts";
import { isSelfApproval } from "../report/reviewPairing.ts";
import type { ChangeRow, ReportRows, UnreviewedRow } from "../store/reportQueries.ts";
import { approvalAfter, approvalBefore } from "./approvals.ts";
import { type Control, type RecordControl, type Severity, WEEKDAYS } from "./config.ts";
import { isoWithOffset } from "./isoTime.ts";
import { localTime } from "./localTime.ts";

/** A finding before it is stored: the control's judgment on one record, or on the evidence. */
interface Draft {
  /** The record's id, or a key of the evidence problem (a day, a sync time). */
  key: string;
  recordId: string | null;
  entity: string | null;
  actionType: string | null;
  occurredAt: number | null;
  actor: string | null;
  message: string;
}

export interface ControlInputs {
  /** Evaluation time (epoch ms). */
  now: number;
  start: number;
  end: number;
  /** Experiment state changes and config edits of the period, review records excluded. */
  changes: readonly ReportRows["controlChanges"][];
  /**
   * check's default period: when the last check ran (`since`), and the changes before this period that
   * an emergency's review time reaches (`changes`): that check left those not yet due, no other sees them.
   */
  deferred?: { since: number; changes: readonly ReportRows["controlChanges"][] } | undefined;
  /** The report's changes without an approved review before them. */
  unreviewed: readonly UnreviewedRow[];
  /** Approvals paired with their requests, from a review window before the period to after it. */
  pairs: readonly ReviewPair[];
  lastSyncAt: number | null;
  /** When the sync under way now began (its live lease); null or absent: none runs. */
  syncRunningSince?: number | null;
  /**
   * Server days of the period that are not reconciled (a gap or no coverage data); null when the store
   * holds no dated record, so there are no server days to reconcile.
   */
  gapDays: readonly string[] | null;
  /**
   * Why `verify` fails, or null when it passes: its message, and its break's key (the kind and where,
   * no count a sync moves): one break is one finding for as long as it stays.
   */
  integrityFailure: { key: string; message: string } | null;
}

interface Evaluation {
  drafts: Draft[];
  /** Ticket keys found by a ticket-reference control, per change. */
  tickets: { recordId: string; ticket: string }[];
}

export const SEVERITY_RANK: Record<Severity, number> = { low: 1, medium: 2, high: 3 };

function inScope(control: RecordControl, name: string, actionType: string): boolean {
  if (control.actionTypes && !control.actionTypes.includes(actionType)) return false;
  return control.entityPattern === undefined || new RegExp(control.entityPattern).test(name);
}

function draftOf(row: ChangeRow | UnreviewedRow, message: string, actor?: string | null): Draft {
  return {
    key: row.id,
    recordId: row.id,
    entity: row.name,
    actionType: row.action_type,
    occurredAt: row.occurred_at,
    actor: actor ?? row.updated_by,
    message,
  };
}

const HOUR = 3_600_000;
const DAY = 86_400_000;

type Of<K extends Control["kind"]> = Extract<Control, { kind: K }>;

type Weekday = (typeof WEEKDAYS)[number];

/**
 * Whether a local time falls in the window: on one of `days` from `from` to `to`, or for a window past
 * midnight ("22:00-06:00"), from `from` on one of `days` to `to` on the day after.
 */
function insideWindow(
  days: readonly Weekday[],
  from: string,
  to: string,
  local: { weekday: Weekday; hhmm: string },
): boolean {
  if (from < to) return days.includes(local.weekday) && local.hhmm >= from && local.hhmm < to;
  const dayBefore = WEEKDAYS[(WEEKDAYS.indexOf(local.weekday) + 6) % 7]!;
  return (
    (days.includes(local.weekday) && local.hhmm >= from) || (days.includes(dayBefore) && local.hhmm < to)
  );
}

function changeWindow(control: Of<"change-window">, inputs: ControlInputs): Draft[] {
  const [from, to] = [control.hours.slice(0, 5), control.hours.slice(6)];
  const emergency = control.emergencyPattern ? new RegExp(control.emergencyPattern) : null;
  const within = control.postReviewDays * DAY;
  const deferred = inputs.deferred;
  // Emergencies the last check left because their review could still come (due after it ran).
  const left = (deferred?.changes ?? []).filter(
    (c) => emergency?.test(c.change_log ?? "") && c.occurred_at + within > deferred!.since,
  );
  const drafts: Draft[] = [];
  for (const change of [...left, ...inputs.changes]) {
    if (!inScope(control, change.name, change.action_type)) continue;
    const local = localTime(change.occurred_at, control.zone);
    if (insideWindow(control.days, from, to, local)) continue;
    const where = `${local.weekday} ${local.hhmm} ${control.zone}`;
    if (emergency?.test(change.change_log ?? "")) {
      if (approvalAfter(inputs.pairs, change, within)) continue;
      // The review may still come: a finding only once its time is up.
      if (inputs.now < change.occurred_at + within) continue;
      drafts.push(
        draftOf(
          change,
          `emergency change outside the change window (${where}) without an approved review within ${control.postReviewDays} days`,
        ),
      );
      continue;
    }
    drafts.push(
      draftOf(
        change,
        `change outside the change window (${where}; allowed ${control.days.join(",")} ${control.hours})`,
      ),
    );
  }
  return drafts;
}

/**
 * Approvals given by the review's requester (the report's pairing), and changes made by the person who
 * approved the review before them (the latest approval of the entity within the review window).
 */
function selfApproved(control: Of<"no-self-approval">, inputs: ControlInputs): Draft[] {
  const drafts = inputs.pairs
    .filter((p) => p.accept.occurred_at >= inputs.start && p.accept.occurred_at < inputs.end)
    .filter((p) => isSelfApproval(p) && inScope(control, p.accept.name, p.accept.action_type))
    .map((p) => draftOf({ ...p.accept, category: "" }, "review approved by the person who requested it"));
  for (const change of inputs.changes) {
    if (!inScope(control, change.name, change.action_type) || !change.updated_by_user_id) continue;
    const review = approvalBefore(inputs.pairs, change);
    if (review?.accept.updated_by_user_id !== change.updated_by_user_id) continue;
    drafts.push(draftOf(change, "change made by the person who approved its review"));
  }
  return drafts;
}

function ticketReference(control: Of<"ticket-reference">, inputs: ControlInputs): Evaluation {
  const pattern = new RegExp(control.pattern);
  const result: Evaluation = { drafts: [], tickets: [] };
  for (const change of inputs.changes) {
    if (!inScope(control, change.name, change.action_type)) continue;
    const review = approvalBefore(inputs.pairs, change);
    const texts = [change.change_log, review?.request.change_log, review?.accept.change_log];
    const ticket = texts.map((t) => pattern.exec(t ?? "")?.[0]).find((t) => t !== undefined);
    if (ticket !== undefined) result.tickets.push({ recordId: change.id, ticket });
    else result.drafts.push(draftOf(change, "no ticket reference in the change log or its review"));
  }
  return result;
}

function recordControl(control: RecordControl, inputs: ControlInputs): Evaluation {
  const none: Evaluation["tickets"] = [];
  switch (control.kind) {
    case "review-required":
      return {
        drafts: inputs.unreviewed
          .filter((u) => inScope(control, u.name, u.action_type))
          .map((u) => draftOf(u, "change without an approved review before it")),
        tickets: none,
      };
    case "no-self-approval":
      return { drafts: selfApproved(control, inputs), tickets: none };
    case "change-window":
      return { drafts: changeWindow(control, inputs), tickets: none };
    case "ticket-reference":
      return ticketReference(control, inputs);
    case "restricted-actor":
      return {
        drafts: inputs.changes
          .filter((c) => inScope(control, c.name, c.action_type))
          .filter((c) => control.actors.some((a) => a === c.updated_by || a === c.updated_by_user_id))
          .map((c) => draftOf(c, `change by a restricted actor (${c.updated_by ?? c.updated_by_user_id})`)),
        tickets: none,
      };
  }
}

function evidenceDraft(key: string, message: string): Draft {
  return { key, recordId: null, entity: null, actionType: null, occurredAt: null, actor: null, message };
}

/**
 * The last successful sync older than the control allows (or none ever). A sync under way that began
 * within that age counts as fresh: a long backfill holds the lease, the daemon's syncs fail on it
 * meanwhile, and what they watch for is syncs that stopped, not one running now. It is judged when it
 * ends, or once it has run longer than the age itself (the finding then says it still runs).
 */
function staleSync(control: Of<"sync-freshness">, inputs: ControlInputs): Draft[] {
  const maxAge = control.maxAgeHours * HOUR;
  const at = inputs.lastSyncAt;
  const running = inputs.syncRunningSince ?? null;
  if (at !== null && inputs.now - at <= maxAge) return [];
  if (running !== null && inputs.now - running <= maxAge) return [];
  const still = running === null ? "" : `; a sync running since ${isoWithOffset(running)} has not finished`;
  if (at === null) return [evidenceDraft("sync-never", `no sync has ever succeeded${still}`)];
  // The key is part of the finding id: the last sync's instant as first written (UTC, `Z`), so the same
  // stale sync stays one finding, alerted once, whatever the message says. The message gives the time
  // as check's output gives every time (isoTime.ts).
  const message = `the last successful sync finished ${isoWithOffset(at)}, more than ${control.maxAgeHours} hours ago${still}`;
  return [evidenceDraft(`sync-${new Date(at).toISOString()}`, message)];
}

/** The findings of one control over the inputs. */
export function evaluate(control: Control, inputs: ControlInputs): Evaluation {
  switch (control.kind) {
    case "sync-freshness":
      return { drafts: staleSync(control, inputs), tickets: [] };
    case "completeness":
      // Fail closed, as the report says "Not checked": an empty store proves nothing complete.
      if (inputs.gapDays === null)
        return {
          drafts: [
            evidenceDraft(
              "no-dated-records",
              "the period cannot be checked: the store holds no dated record",
            ),
          ],
          tickets: [],
        };
      return {
        drafts: inputs.gapDays.map((day) =>
          evidenceDraft(`day-${day}`, `server day ${day} is not reconciled (a gap or no coverage data)`),
        ),
        tickets: [],
      };
    case "integrity":
      return {
        drafts:
          inputs.integrityFailure === null
            ? []
            : [
                evidenceDraft(
                  `verify-${inputs.integrityFailure.key}`,
                  `verify fails: ${inputs.integrityFailure.message}`,
                ),
              ],
        tickets: [],
      };
    default:
      return recordControl(control, inputs);
  }
}
