// compliance_<from>_<to>.md: the period's completeness, activity, timelines, rule diffs, reviews and
// mutations, each section followed by the query behind it. Long sections are streamed row by row
// into a buffered file writer, so memory does not grow with the period.
import { closeSync, openSync, writeSync } from "node:fs";
import type Database from "better-sqlite3";
import microdiff from "microdiff";
import { pathSuffix } from "../diff/values.ts";
import { mdRow, mdTable, mdText } from "./escape.ts";
import type { Period } from "./period.ts";
import { paramsFor, QUERIES, type QueryName } from "./queries.ts";
import { REVIEW_WINDOW_DAYS } from "./reviews.ts";

/** Appends text to a file through a 64 KiB buffer: bounded memory, few system calls. */
class TextFile {
  private readonly fd: number;
  private chunks: string[] = [];
  private size = 0;

  constructor(path: string) {
    this.fd = openSync(path, "w", 0o600);
  }

  write(text: string): void {
    this.chunks.push(text);
    this.size += text.length;
    if (this.size >= 65_536) this.flush();
  }

  line(text = ""): void {
    this.write(`${text}\n`);
  }

  flush(): void {
    if (this.chunks.length === 0) return;
    writeSync(this.fd, this.chunks.join(""));
    this.chunks = [];
    this.size = 0;
  }

  close(): void {
    this.flush();
    closeSync(this.fd);
  }
}

export interface ComplianceContext {
  sqlite: Database.Database;
  period: Period;
  actionTypes: readonly string[] | null;
  params: Record<string, unknown>;
  formatTime: (epochMs: number) => string;
  generatedAt: string;
  version: string;
}

export interface ComplianceResult {
  /** Records of the period (after the action-type filter) that the report covers. */
  records: number;
}

export function writeComplianceMarkdown(path: string, ctx: ComplianceContext): ComplianceResult {
  const out = new TextFile(path);
  try {
    // The per-type counts also give the header its total: one pass over the period instead of two.
    const byType = run<ActionTypeCount>(ctx, "byActionType");
    const records = byType.reduce((sum, r) => sum + r.records, 0);
    writeHeader(out, ctx, records);
    writeCompleteness(out, ctx);
    writeActivity(out, ctx, byType);
    writeDaily(out, ctx);
    writeExperimentTimelines(out, ctx);
    writeConfigEdits(out, ctx);
    writeReviews(out, ctx);
    writeMutations(out, ctx);
    return { records };
  } finally {
    out.close();
  }
}

function run<Row>(ctx: ComplianceContext, name: QueryName): Row[] {
  const sql = QUERIES[name];
  return ctx.sqlite.prepare(sql).all(paramsFor(sql, ctx.params)) as Row[];
}

function iterate<Row>(ctx: ComplianceContext, name: QueryName): IterableIterator<Row> {
  const sql = QUERIES[name];
  return ctx.sqlite.prepare(sql).iterate(paramsFor(sql, ctx.params)) as IterableIterator<Row>;
}

function querySection(out: TextFile, ...names: QueryName[]): void {
  out.line();
  out.line(`<details><summary>Query</summary>`);
  for (const name of names) {
    out.line();
    out.line("```sql");
    out.line(QUERIES[name]);
    out.line("```");
  }
  out.line();
  out.line("</details>");
  out.line();
}

function time(ctx: ComplianceContext, epochMs: number | null): string {
  return epochMs === null ? "(unknown time)" : ctx.formatTime(epochMs);
}

function writeHeader(out: TextFile, ctx: ComplianceContext, records: number): void {
  const { period } = ctx;
  out.line(`# Compliance report ${period.from} to ${period.to}`);
  out.line();
  out.line(
    mdTable(
      ["Item", "Value"],
      [
        ["Period", `${period.from} to ${period.to}, both days included`],
        ["Time zone", mdText(period.timeZone)],
        ["From (inclusive)", `${ctx.formatTime(period.start)} (${period.start})`],
        ["To (exclusive)", `${ctx.formatTime(period.end)} (${period.end})`],
        ["Action types", ctx.actionTypes ? ctx.actionTypes.map(mdText).join(", ") : "all"],
        ["Records in the period", String(records)],
        ["Generated at", ctx.generatedAt],
        ["flagtrail", mdText(ctx.version)],
      ],
    ),
  );
  out.line();
  out.line(
    "Times are shown in the report's time zone. Each section ends with the SQL behind it; its parameters: " +
      `@start = ${period.start}, @end = ${period.end}, @types = ${ctx.params.types === null ? "NULL" : `'${mdText(ctx.params.types)}'`}, ` +
      `@fromDay = '${period.from}', @toDay = '${period.to}', @reviewWindow = ${ctx.params.reviewWindow}, ` +
      `@reviewStart = ${ctx.params.reviewStart}; the JSON lists @days, @approvals, @rejects, ` +
      "@exempt and @flows come from src/report/reviews.ts and the period.",
  );
  out.line();
}

interface CoverageRow {
  day: string;
  filter_key: string;
  server_total: number;
  local_count: number;
  checked_at: number;
}

function writeCompleteness(out: TextFile, ctx: ComplianceContext): void {
  const rows = run<CoverageRow>(ctx, "coverage");
  const unplaced = run<{ records: number }>(ctx, "unplaced")[0]?.records ?? 0;
  const byDay = new Map<string, CoverageRow[]>();
  for (const row of rows) {
    const list = byDay.get(row.day) ?? [];
    list.push(row);
    byDay.set(row.day, list);
  }
  const days = ctx.period.days.map((d) => d.day);
  const covered = days.filter((d) => byDay.has(d));
  const matching = covered.filter((d) => byDay.get(d)!.every((r) => r.local_count === r.server_total));
  const gaps = rows.filter((r) => r.local_count !== r.server_total);
  const uncovered = days.filter((d) => !byDay.has(d));

  out.line("## Completeness");
  out.line();
  out.line(
    `Coverage data (the server's total per day, checked by the sync) exists for ${covered.length} of the ` +
      `${days.length} days in the period. On ${matching.length} of them the local count matches the server's ` +
      `total for every filter synced. Days are the server's calendar days.`,
  );
  out.line();
  if (gaps.length === 0) {
    out.line("No day with coverage data has a gap.");
  } else {
    out.line(`Days with a gap (${new Set(gaps.map((g) => g.day)).size}):`);
    out.line();
    out.line(
      mdTable(
        ["Day", "Filter", "Server total", "Local count", "Difference", "Checked at"],
        gaps.map((g) => [
          g.day,
          mdText(g.filter_key),
          String(g.server_total),
          String(g.local_count),
          String(g.local_count - g.server_total),
          ctx.formatTime(g.checked_at),
        ]),
      ),
    );
  }
  out.line();
  if (uncovered.length === 0) {
    out.line("Every day of the period has coverage data.");
  } else {
    out.line(`Days with no coverage data at all (${uncovered.length}): ${uncovered.join(", ")}.`);
  }
  out.line();
  if (unplaced > 0) {
    out.line(
      `${unplaced} stored records have a date or time that could not be parsed; they belong to no period ` +
        "and are not counted here (`SELECT * FROM audit_logs WHERE occurred_at IS NULL`).",
    );
    out.line();
  }
  querySection(out, "coverage", "unplaced");
}

interface ActionTypeCount {
  action_type: string;
  category: string;
  records: number;
}

function writeActivity(out: TextFile, ctx: ComplianceContext, byType: readonly ActionTypeCount[]): void {
  out.line("## Activity by action type");
  out.line();
  if (byType.length === 0) out.line("No records in the period.");
  else {
    out.line(
      mdTable(
        ["Action type", "Category", "Records"],
        byType.map((r) => [mdText(r.action_type), mdText(r.category), String(r.records)]),
      ),
    );
  }
  querySection(out, "byActionType");

  const byPerson = run<{
    updated_by_user_id: string | null;
    updated_by: string | null;
    email: string | null;
    records: number;
  }>(ctx, "byPerson");
  out.line("## Activity by person");
  out.line();
  if (byPerson.length === 0) out.line("No records in the period.");
  else {
    out.line(
      mdTable(
        ["Person", "User id", "Email", "Records"],
        byPerson.map((r) => [
          mdText(r.updated_by),
          mdText(r.updated_by_user_id),
          mdText(r.email),
          String(r.records),
        ]),
      ),
    );
  }
  querySection(out, "byPerson");
}

function writeDaily(out: TextFile, ctx: ComplianceContext): void {
  const rows = run<{ day: string; records: number }>(ctx, "daily");
  const max = Math.max(1, ...rows.map((r) => r.records));
  out.line("## Daily activity");
  out.line();
  out.line(`Records per day in ${mdText(ctx.period.timeZone)}.`);
  out.line();
  out.line("```mermaid");
  out.line("xychart-beta");
  out.line(`    title "Records per day"`);
  out.line(`    x-axis [${rows.map((r) => `"${r.day}"`).join(", ")}]`);
  out.line(`    y-axis "Records" 0 --> ${max}`);
  out.line(`    bar [${rows.map((r) => r.records).join(", ")}]`);
  out.line("```");
  querySection(out, "daily");
}

function writeExperimentTimelines(out: TextFile, ctx: ComplianceContext): void {
  out.line("## Experiment state timelines");
  out.line();
  let current: string | null = null;
  let experiments = 0;
  for (const row of iterate<{
    name: string;
    occurred_at: number;
    action_type: string;
    updated_by: string | null;
    change_log: string | null;
  }>(ctx, "experimentTimelines")) {
    if (row.name !== current) {
      if (current !== null) out.line();
      current = row.name;
      experiments += 1;
      out.line(`### ${mdText(row.name) || "(no name)"}`);
      out.line();
      out.line(mdRow(["Time", "State change", "By", "Change log"]));
      out.line(mdRow(["---", "---", "---", "---"]));
    }
    out.line(
      mdRow([
        time(ctx, row.occurred_at),
        mdText(row.action_type),
        mdText(row.updated_by),
        mdText(row.change_log),
      ]),
    );
  }
  if (experiments === 0) out.line("No experiment state changes in the period.");
  querySection(out, "experimentTimelines");
}

interface ConfigEditRow {
  name: string;
  occurred_at: number;
  id: string;
  action_type: string;
  updated_by: string | null;
  change_log: string | null;
  rule_diff_summary: string | null;
  rule_id: string | null;
  rule_name: string | null;
  change: string | null;
  field: string | null;
  old_value: string | null;
  new_value: string | null;
  old_position: number | null;
  new_position: number | null;
}

function describeRuleChange(row: ConfigEditRow): string {
  const rule = `rule ${mdText(JSON.stringify(row.rule_name ?? row.rule_id))}`;
  switch (row.change) {
    case "added":
      return `${rule} added at position ${row.new_position}`;
    case "removed":
      return `${rule} removed from position ${row.old_position}`;
    case "moved":
      return `${rule} moved from position ${row.old_position} to ${row.new_position}`;
    default:
      return `${rule} ${mdText(row.field)}: ${mdText(row.old_value ?? "(none)")} → ${mdText(row.new_value ?? "(none)")}`;
  }
}

function writeConfigEdits(out: TextFile, ctx: ComplianceContext): void {
  out.line("## Config edits");
  out.line();
  let currentName: string | null = null;
  let currentId: string | null = null;
  let configs = 0;
  for (const row of iterate<ConfigEditRow>(ctx, "configEdits")) {
    if (row.name !== currentName) {
      if (currentName !== null) out.line();
      currentName = row.name;
      currentId = null;
      configs += 1;
      out.line(`### ${mdText(row.name) || "(no name)"}`);
      out.line();
    }
    if (row.id !== currentId) {
      currentId = row.id;
      const log = row.change_log ? `: ${mdText(row.change_log)}` : "";
      out.line(
        `- ${time(ctx, row.occurred_at)} ${mdText(row.action_type)} by ${mdText(row.updated_by) || "(unknown)"}${log}`,
      );
      if (row.rule_diff_summary) out.line(`  - Rule diff: ${mdText(row.rule_diff_summary)}`);
    }
    if (row.change) out.line(`    - ${describeRuleChange(row)}`);
  }
  if (configs === 0) out.line("No config edits in the period.");
  querySection(out, "configEdits");
}

function writeReviews(out: TextFile, ctx: ComplianceContext): void {
  out.line("## Reviews");
  out.line();
  out.line("### Changes with no approved review before them");
  out.line();
  out.line(
    "An experiment state change or config edit counts as reviewed when an approval (a review accept " +
      `record, see REVIEW_FLOWS) for the same entity name exists at or up to ${REVIEW_WINDOW_DAYS} days ` +
      "before it. Creations and the review records themselves are exempt.",
  );
  out.line();
  let unreviewed = 0;
  for (const row of iterate<{
    occurred_at: number;
    name: string;
    action_type: string;
    category: string;
    updated_by: string | null;
  }>(ctx, "unreviewed")) {
    if (unreviewed === 0) {
      out.line(mdRow(["Time", "Entity", "Action type", "Category", "By"]));
      out.line(mdRow(["---", "---", "---", "---", "---"]));
    }
    unreviewed += 1;
    out.line(
      mdRow([
        time(ctx, row.occurred_at),
        mdText(row.name),
        mdText(row.action_type),
        mdText(row.category),
        mdText(row.updated_by),
      ]),
    );
  }
  if (unreviewed === 0) out.line("None.");
  querySection(out, "unreviewed");

  out.line("### Reviews approved by their own author");
  out.line();
  out.line(
    "An approval whose latest request of the same review flow for the same entity (up to " +
      `${REVIEW_WINDOW_DAYS} days earlier) was made by the same user id.`,
  );
  out.line();
  const self = run<{
    occurred_at: number;
    name: string;
    action_type: string;
    updated_by: string | null;
    updated_by_user_id: string | null;
    requested_at: number | null;
  }>(ctx, "selfApproved");
  if (self.length === 0) out.line("None.");
  else {
    out.line(
      mdTable(
        ["Approved at", "Entity", "Approval", "Approved by", "User id", "Requested at"],
        self.map((r) => [
          time(ctx, r.occurred_at),
          mdText(r.name),
          mdText(r.action_type),
          mdText(r.updated_by),
          mdText(r.updated_by_user_id),
          time(ctx, r.requested_at),
        ]),
      ),
    );
  }
  querySection(out, "selfApproved");

  out.line("### Rejected reviews");
  out.line();
  const rejected = run<{
    occurred_at: number;
    name: string;
    action_type: string;
    updated_by: string | null;
    change_log: string | null;
  }>(ctx, "rejected");
  if (rejected.length === 0) out.line("None.");
  else {
    out.line(
      mdTable(
        ["Time", "Entity", "Action type", "Rejected by", "Change log"],
        rejected.map((r) => [
          time(ctx, r.occurred_at),
          mdText(r.name),
          mdText(r.action_type),
          mdText(r.updated_by),
          mdText(r.change_log),
        ]),
      ),
    );
  }
  querySection(out, "rejected");
}

/** Top-level paths that differ between the first stored version of a record and a later one. */
function changedPaths(original: string, revision: string): string {
  try {
    const a = JSON.parse(original) as unknown;
    const b = JSON.parse(revision) as unknown;
    if (a === null || b === null || typeof a !== "object" || typeof b !== "object") return "(whole record)";
    const paths = microdiff(a as Record<string, unknown>, b as Record<string, unknown>).map(
      (d) =>
        `${d.type === "CREATE" ? "+" : d.type === "REMOVE" ? "-" : "~"}${pathSuffix(d.path).replace(/^\./, "")}`,
    );
    return paths.join(", ");
  } catch {
    return "(not JSON)";
  }
}

function writeMutations(out: TextFile, ctx: ComplianceContext): void {
  out.line("## Records mutated under the same id");
  out.line();
  out.line(
    "The service sent these records again with the same id and different content. The store keeps the " +
      "first version in audit_logs and every later one in audit_log_revisions.",
  );
  out.line();
  let count = 0;
  for (const row of iterate<{
    id: string;
    name: string;
    action_type: string;
    occurred_at: number | null;
    seen_at: number;
    original: string;
    revision: string;
  }>(ctx, "mutations")) {
    if (count === 0) {
      out.line(
        mdRow(["Record id", "Entity", "Action type", "Record time", "Revision seen at", "Fields changed"]),
      );
      out.line(mdRow(["---", "---", "---", "---", "---", "---"]));
    }
    count += 1;
    out.line(
      mdRow([
        mdText(row.id),
        mdText(row.name),
        mdText(row.action_type),
        time(ctx, row.occurred_at),
        ctx.formatTime(row.seen_at),
        mdText(changedPaths(row.original, row.revision)),
      ]),
    );
  }
  if (count === 0) out.line("None.");
  querySection(out, "mutations");
}
