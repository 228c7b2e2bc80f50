// The compliance Markdown's entity-history sections (issue 10): what each config edit changed according
// to the stored versions, the reconciliation of versions and experiments against the audit log, and each
// experiment's timeline ending with its current state. Left out when the store holds no entity reads
// (synced with --no-entities, or before entity history existed): "none found" would then mislead.
import type {
  ConfigEditVersionChangeRow,
  ExperimentCurrentStateRow,
} from "../../store/entityReportQueries.ts";
import type { TimelineRow } from "../../store/reportQueries.ts";
import { mdRow, mdText } from "../escape.ts";
import {
  batches,
  type ComplianceContext,
  heading,
  querySection,
  run,
  type TextFile,
  time,
} from "./markdown.ts";

export const ENTITY_HEADINGS = {
  beforeAfter: "Config edits: before and after, from the stored versions",
  reconciliation: "Reconciliation with entity history",
  timelines: "Experiment timelines and current state",
} as const;

function header(out: TextFile, cells: readonly string[]): void {
  out.line(mdRow(cells));
  out.line(mdRow(cells.map(() => "---")));
}

/** `field path: old → new` (JSON texts as stored; absent sides as +new / -old). */
function describeChange(row: ConfigEditVersionChangeRow): string {
  const where = row.path === null ? row.field : row.field === "rules" ? row.path : `${row.field} ${row.path}`;
  const values =
    row.old_value === null
      ? `+${row.new_value}`
      : row.new_value === null
        ? `-${row.old_value}`
        : `${row.old_value} → ${row.new_value}`;
  return `${where}: ${row.change === "changed" ? values : `${row.change} ${values}`}`;
}

async function writeBeforeAfter(out: TextFile, ctx: ComplianceContext): Promise<void> {
  heading(out, ctx, 2, ENTITY_HEADINGS.beforeAfter);
  out.line();
  out.line(
    "Config edits of the period whose audit record carries no rule change, with what the version they " +
      "produced changed against the version before it (config_edit_links, config_version_changes).",
  );
  out.line();
  let current = null as { row: ConfigEditVersionChangeRow; changes: string[] } | null;
  let count = 0;
  const flush = () => {
    if (current === null) return;
    const r = current.row;
    if (count === 0) header(out, ["Time", "Config", "Action type", "By", "Version", "Before → after"]);
    count += 1;
    const what = current.changes.length > 0 ? current.changes.join("; ") : "(no field changed)";
    out.line(
      mdRow([
        time(ctx, r.occurred_at),
        mdText(r.name),
        mdText(r.action_type),
        mdText(r.updated_by ?? ""),
        String(r.version),
        mdText(what),
      ]),
    );
  };
  for await (const batch of batches(ctx, "configEditVersionChanges")) {
    for (const row of batch) {
      if (current?.row.id !== row.id) {
        flush();
        current = { row, changes: [] };
      }
      if (row.field !== null) current.changes.push(describeChange(row));
    }
  }
  flush();
  if (count === 0) out.line("None.");
  querySection(out, ctx, "configEditVersionChanges");
}

async function writeReconciliation(out: TextFile, ctx: ComplianceContext): Promise<void> {
  heading(out, ctx, 2, ENTITY_HEADINGS.reconciliation);
  out.line();
  heading(out, ctx, 3, "Config versions with no audit record");
  out.line();
  out.line(
    "A version stored by the service that no config-edit record of the audit log produced: a change the audit log does not show.",
  );
  out.line();
  const versions = await run(ctx, "versionsWithoutRecord");
  if (versions.length > 0) header(out, ["Version time", "Config", "Version", "Modifier", "Read at"]);
  for (const v of versions) {
    const who = v.last_modifier_name ?? v.last_modifier_id ?? "";
    out.line(
      mdRow([
        time(ctx, v.last_modified_time),
        mdText(v.config_key),
        String(v.version),
        mdText(who),
        ctx.formatTime(v.first_seen_at),
      ]),
    );
  }
  if (versions.length === 0) out.line("None.");
  querySection(out, ctx, "versionsWithoutRecord");

  heading(out, ctx, 3, "Config edits with no version");
  out.line();
  out.line(
    "A config-edit record whose config was read after it, but no stored version matches it (same second, same modifier).",
  );
  out.line();
  const edits = await run(ctx, "editsWithoutVersion");
  if (edits.length > 0) header(out, ["Time", "Config", "Action type", "By", "Last read", "Record id"]);
  for (const e of edits) {
    const read = e.last_read === "not_found" ? "config not found (404)" : "versions read";
    out.line(
      mdRow([
        time(ctx, e.occurred_at),
        mdText(e.name),
        mdText(e.action_type),
        mdText(e.updated_by ?? ""),
        `${read}, ${ctx.formatTime(e.read_at)}`,
        mdText(e.id),
      ]),
    );
  }
  if (edits.length === 0) out.line("None.");
  querySection(out, ctx, "editsWithoutVersion");

  heading(out, ctx, 3, "Experiments whose current status contradicts the audit timeline");
  out.line();
  out.line(
    "The experiment's status when last read is not the one its last state change in the audit log left (all history, not only the period).",
  );
  out.line();
  const contradictions = await run(ctx, "experimentContradictions");
  if (contradictions.length > 0)
    header(out, ["Experiment", "Layer", "Status now", "Read at", "Last state change", "Implies"]);
  for (const c of contradictions) {
    const last =
      c.last_action === null ? "(none in the audit log)" : `${c.last_action}, ${time(ctx, c.last_at)}`;
    out.line(
      mdRow([
        mdText(c.name),
        mdText(c.layer_id),
        mdText(c.status),
        ctx.formatTime(c.taken_at),
        mdText(last),
        mdText(c.implied_status ?? ""),
      ]),
    );
  }
  if (contradictions.length === 0) out.line("None.");
  querySection(out, ctx, "experimentContradictions");
}

/** Now, decision reason, launched group (by name when the group list has it, else its id). */
function nowCells(ctx: ComplianceContext, state: ExperimentCurrentStateRow | undefined): string[] {
  if (state === undefined) return ["(not read)", "", ""];
  const group = state.launched_group ?? state.launched_group_id ?? "";
  return [`${state.status} (read ${ctx.formatTime(state.taken_at)})`, state.decision_reason ?? "", group];
}

async function writeTimelines(out: TextFile, ctx: ComplianceContext): Promise<void> {
  heading(out, ctx, 2, ENTITY_HEADINGS.timelines);
  out.line();
  out.line(
    "Each experiment's state changes in the period, in order, then its state as last read: status, decision reason and launched group.",
  );
  out.line();
  const states = new Map((await run(ctx, "experimentCurrentStates")).map((s) => [s.name, s]));
  let current = null as { name: string; steps: string[] } | null;
  let count = 0;
  const flush = () => {
    if (current === null) return;
    if (count === 0) header(out, ["Experiment", "Timeline", "Now", "Decision reason", "Launched group"]);
    count += 1;
    const now = nowCells(ctx, states.get(current.name)).map(mdText);
    out.line(mdRow([mdText(current.name), mdText(current.steps.join(" → ")), ...now]));
  };
  for await (const batch of batches(ctx, "experimentTimelines")) {
    for (const row of batch as readonly TimelineRow[]) {
      if (current?.name !== row.name) {
        flush();
        current = { name: row.name, steps: [] };
      }
      current.steps.push(`${row.action_type} (${time(ctx, row.occurred_at)})`);
    }
  }
  flush();
  if (count === 0) out.line("No experiment state changes in the period.");
  querySection(out, ctx, "experimentTimelines", "experimentCurrentStates");
}

/** The three sections, or nothing when the store has never read entity history. */
export async function writeEntityHistory(out: TextFile, ctx: ComplianceContext): Promise<void> {
  const reads = (await run(ctx, "entityReads"))[0]?.records ?? 0;
  if (reads === 0) return;
  await writeBeforeAfter(out, ctx);
  await writeReconciliation(out, ctx);
  await writeTimelines(out, ctx);
}
