// `flagtrail check` for one project's part of the store: evaluate every control over the period, keep
// the findings (new ones with their alerts in the outbox, same transaction), and return them with the
// waiver in force on each.
import { type NewFinding, writeCheck } from "../store/controls/findings.ts";
import { earliestStoredAfter, lastDefaultCheck } from "../store/controls/reads.ts";
import { readWaivers } from "../store/controls/waivers.ts";
import { maxSeq } from "../store/metaStore.ts";
import { closeProjectStores, openStoreProjects, type ProjectStore } from "../store/projectStores.ts";
import type { Control, ControlKind, Severity, Sink } from "./config.ts";
import { type ControlInputs, evaluate } from "./evaluate.ts";
import type { Finding } from "./finding.ts";
import { readInputs } from "./inputs.ts";
import { isoWithOffset } from "./isoTime.ts";
import { waiversInForce } from "./waivers.ts";

export interface CheckedProject {
  project: string;
  start: number;
  end: number;
  findings: Finding[];
}

/**
 * What a check runs with: the config's controls and sinks, and FLAGTRAIL_SIGNING_KEY when the caller
 * read one (the integrity control then checks the chain head's signature, as `verify` does).
 */
export interface CheckConfig {
  controls: readonly Control[];
  sinks: readonly Sink[];
  signingKey?: string | undefined;
}

const DEFAULT_LOOKBACK_MS = 7 * 86_400_000;

/** Finding ids: the control's id and the record's (or the evidence key), joined; stable across runs. */
function findingId(controlId: string, key: string): string {
  return `${controlId}:${key}`;
}

export function findingOf(row: NewFinding, project: string, firstSeenAt: number): Omit<Finding, "waiver"> {
  return {
    id: row.id,
    control: row.control_id,
    kind: row.kind as ControlKind,
    severity: row.severity as Severity,
    project,
    recordId: row.record_id,
    entity: row.entity,
    actionType: row.action_type,
    occurredAt: row.occurred_at === null ? null : isoWithOffset(row.occurred_at),
    actor: row.actor,
    message: row.message,
    firstSeenAt: isoWithOffset(firstSeenAt),
  };
}

/**
 * The period to check: the one given, else since the last default check, else the last 7 days. "Since
 * the last check" starts at the end of its period, or at the time it ran when that end was later (a `--to`
 * of today or after: what had not happened yet was not checked), so that no change falls between two
 * checks. It reaches back to records stored since (seq above the check's) that happened before it (a sync
 * that failed for a day), at most 7 days: an older history loaded later is a backfill, checked with a
 * given period, not alerted on by a nightly check. A check of a given period moves none of this.
 * Periods overlapping is harmless (a finding is kept once). A start not before now (a clock set back)
 * would check nothing: the last 7 days then. `deferredSince`: when the last default check ran, whose
 * emergency changes not yet due (./evaluate.ts) this one judges.
 */
async function periodFor(
  part: ProjectStore,
  given: { start: number; end: number } | null,
  now: number,
): Promise<{ start: number; end: number; deferredSince: number | null }> {
  if (given) return { ...given, deferredSince: null };
  const last = await lastDefaultCheck(part.store);
  if (last === null) return { start: now - DEFAULT_LOOKBACK_MS, end: now, deferredSince: null };
  const since = Math.min(last.periodEnd, last.checkedAt);
  const late = last.lastSeq === null ? null : await earliestStoredAfter(part.store, last.lastSeq);
  const reach = late === null ? since : Math.max(Math.min(late, since), since - DEFAULT_LOOKBACK_MS);
  // From the start of that second: a record's time has one-second resolution, so a change made just
  // after a check, in the same second, is stored as before it.
  const start = Math.floor(reach / 1000) * 1000;
  if (start >= now) return { start: now - DEFAULT_LOOKBACK_MS, end: now, deferredSince: null };
  // The last check left the emergency changes whose review could still come: judged here once due.
  return { start, end: now, deferredSince: last.checkedAt };
}

/** Every control's findings over the inputs, and the ticket keys found: what check keeps and the report shows. */
export function evaluateControls(
  controls: readonly Control[],
  inputs: ControlInputs,
): { rows: NewFinding[]; tickets: { recordId: string; controlId: string; ticket: string }[] } {
  const rows: NewFinding[] = [];
  const tickets: { recordId: string; controlId: string; ticket: string }[] = [];
  for (const control of controls) {
    const result = evaluate(control, inputs);
    for (const t of result.tickets) tickets.push({ ...t, controlId: control.id });
    for (const d of result.drafts) {
      rows.push({
        id: findingId(control.id, d.key),
        control_id: control.id,
        kind: control.kind,
        severity: control.severity,
        record_id: d.recordId,
        entity: d.entity,
        action_type: d.actionType,
        occurred_at: d.occurredAt,
        actor: d.actor,
        message: d.message,
      });
    }
  }
  return { rows, tickets };
}

export async function checkProject(
  part: ProjectStore,
  config: CheckConfig,
  given: { start: number; end: number } | null,
  now: number,
): Promise<CheckedProject> {
  const { start, end, deferredSince } = await periodFor(part, given, now);
  // Read before the inputs: a record a sync stores meanwhile is above it, so the next check takes it.
  const lastSeq = await maxSeq(part.store);
  const range = { start, end, now, deferredSince };
  const inputs = await readInputs(part.store, config.controls, range, config.signingKey);
  const { rows, tickets } = evaluateControls(config.controls, inputs);
  const firstSeen = await writeCheck(part.store, {
    checkedAt: now,
    periodStart: start,
    periodEnd: end,
    lastSeq,
    periodGiven: given !== null,
    findings: rows,
    tickets,
    alertsFor: (row, at) => {
      if (config.sinks.length === 0) return [];
      const payload = JSON.stringify({
        event: "finding",
        finding: { ...findingOf(row, part.project, at), waiver: null },
      });
      return config.sinks.map((sink) => ({ sink: sink.name, payload }));
    },
  });
  const waivers = waiversInForce(await readWaivers(part.store), new Date(now).toISOString().slice(0, 10));
  return {
    project: part.project,
    start,
    end,
    findings: rows.map((row) => ({
      ...findingOf(row, part.project, firstSeen.get(row.id) ?? now),
      waiver: waivers.get(row.id) ?? null,
    })),
  };
}

/**
 * `checkProject` over every project of the store at `db` (or `project`'s), open only for the check;
 * `afterCheck` runs on the open projects afterwards (check --notify delivers their outbox there).
 */
export async function checkStore(
  db: string,
  config: CheckConfig,
  given: { start: number; end: number } | null,
  now: number,
  options: {
    project?: string | undefined;
    afterCheck?: (parts: readonly ProjectStore[]) => Promise<void>;
  } = {},
): Promise<CheckedProject[]> {
  const parts = await openStoreProjects(db, { project: options.project, mustExist: true });
  try {
    const checked: CheckedProject[] = [];
    for (const part of parts) checked.push(await checkProject(part, config, given, now));
    await options.afterCheck?.(parts);
    return checked;
  } finally {
    await closeProjectStores(parts);
  }
}
