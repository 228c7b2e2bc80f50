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
import { allRowsIn, CappedTable, lastFirst, MARKDOWN_CAPS, mostFirst } from "./capped.ts";
import { EXPERIMENT_SECTION } from "./entities.ts";
import {
  anchor,
  batches,
  type ComplianceContext,
  heading,
  type MarkdownOut,
  querySection,
  run,
  time,
} from "./markdown.ts";

export const ENTITY_HEADINGS = {
  beforeAfter: "Config edits: before and after, from the stored versions",
  reconciliation: "Reconciliation with entity history",
  timelines: "Experiment timelines and current state",
} as const;

function header(out: MarkdownOut, cells: readonly string[]): void {
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

/** One config edit's row of the before → after table. */
interface BeforeAfter {
  row: ConfigEditVersionChangeRow;
  changes: string[];
}

function beforeAfterRow(ctx: ComplianceContext, { row: r, changes }: BeforeAfter): string {
  const what = changes.length > 0 ? changes.join("; ") : "(no field changed)";
  return mdRow([
    time(ctx, r.occurred_at),
    mdText(r.name),
    mdText(r.action_type),
    mdText(r.updated_by ?? ""),
    String(r.version),
    mdText(what),
  ]);
}

async function writeBeforeAfter(out: MarkdownOut, ctx: ComplianceContext): Promise<void> {
  heading(out, ctx, 2, ENTITY_HEADINGS.beforeAfter);
  out.line();
  out.line(
    "Config edits of the period whose audit record carries no rule change, with what the version they " +
      "produced changed against the version before it (config_edit_links, config_version_changes).",
  );
  out.line();
  const table = new CappedTable<BeforeAfter>(out, {
    header: ["Time", "Config", "Action type", "By", "Version", "Before → after"],
    cap: { rows: MARKDOWN_CAPS.configEditVersions, rank: lastFirst, show: "ordered" },
    render: (edit) => beforeAfterRow(ctx, edit),
  });
  let current = null as BeforeAfter | null;
  for await (const batch of batches(ctx, "configEditVersionChanges")) {
    for (const row of batch) {
      if (current?.row.id !== row.id) {
        if (current) table.add(current);
        current = { row, changes: [] };
      }
      if (row.field !== null) current.changes.push(describeChange(row));
    }
  }
  if (current) table.add(current);
  // What the versions changed is in no CSV: the query lists it; the edits themselves are CSV rows.
  const csv = ctx.csvFiles?.configEdits;
  const count = table.end((shown, total) => ({
    before:
      `**${shown.length} of ${total} edits shown**: the most recent. The query below lists every one with ` +
      `what its version changed${csv ? `; each edit is a row of \`${csv}\`` : ""}.`,
    after: `… and ${total - shown.length} earlier edits, not shown: the query below lists them.`,
  }));
  if (count === 0) out.line("None.");
  querySection(out, ctx, "configEditVersionChanges");
}

async function writeReconciliation(out: MarkdownOut, ctx: ComplianceContext): Promise<void> {
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

async function writeTimelines(out: MarkdownOut, ctx: ComplianceContext): Promise<void> {
  heading(out, ctx, 2, ENTITY_HEADINGS.timelines);
  out.line();
  const experiments = `[${EXPERIMENT_SECTION.title}](${anchor(ctx, EXPERIMENT_SECTION.title)})`;
  out.line(
    "Each experiment's state changes in the period, in order, then its state as last read: status, " +
      `decision reason and launched group. The state changes are the second query under ${experiments}; ` +
      "the query below reads the states.",
  );
  out.line();
  const states = new Map((await run(ctx, "experimentCurrentStates")).map((s) => [s.name, s]));
  const table = new CappedTable<{ name: string; steps: string[] }>(out, {
    header: ["Experiment", "Timeline", "Now", "Decision reason", "Launched group"],
    // The same experiments as the table of state changes per experiment: the most changed.
    cap: { rows: MARKDOWN_CAPS.entities, rank: mostFirst((e) => e.steps.length), show: "ranked" },
    render: (e) =>
      mdRow([mdText(e.name), mdText(e.steps.join(" → ")), ...nowCells(ctx, states.get(e.name)).map(mdText)]),
  });
  let current = null as { name: string; steps: string[] } | null;
  for await (const batch of batches(ctx, "experimentTimelines")) {
    for (const row of batch as readonly TimelineRow[]) {
      if (current?.name !== row.name) {
        if (current) table.add(current);
        current = { name: row.name, steps: [] };
      }
      current.steps.push(`${row.action_type} (${time(ctx, row.occurred_at)})`);
    }
  }
  if (current) table.add(current);
  const count = table.end((shown, total) => {
    const where = allRowsIn(ctx, "experimentStateChanges", `the second query under ${experiments}`);
    return {
      before:
        `**${shown.length} of ${total} experiments shown**: those with the most state changes, as in ` +
        `${experiments}. Every state change is a row of ${where}; the query below reads ` +
        "every experiment's state.",
      after: `… and ${total - shown.length} more experiments, not shown: every state change of each is in ${where}.`,
    };
  });
  if (count === 0) out.line("No experiment state changes in the period.");
  querySection(out, ctx, "experimentCurrentStates");
}

/** The three sections, or nothing when the store has never read entity history. */
export async function writeEntityHistory(out: MarkdownOut, ctx: ComplianceContext): Promise<void> {
  const reads = (await run(ctx, "entityReads"))[0]?.records ?? 0;
  if (reads === 0) return;
  await writeBeforeAfter(out, ctx);
  await writeReconciliation(out, ctx);
  await writeTimelines(out, ctx);
}
