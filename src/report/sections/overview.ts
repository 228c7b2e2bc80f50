// Header, completeness (coverage) and activity counts and the daily chart.
import { mdRow, mdTable, mdText } from "../escape.ts";
import { type ComplianceContext, iterate, querySection, run, type TextFile, time } from "./markdown.ts";

export function writeHeader(out: TextFile, ctx: ComplianceContext, records: number): void {
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

export function writeCompleteness(out: TextFile, ctx: ComplianceContext): void {
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

export interface ActionTypeCount {
  action_type: string;
  category: string;
  records: number;
}

export function writeActivity(
  out: TextFile,
  ctx: ComplianceContext,
  byType: readonly ActionTypeCount[],
): void {
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

export function writeDaily(out: TextFile, ctx: ComplianceContext): void {
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

export function writeExperimentTimelines(out: TextFile, ctx: ComplianceContext): void {
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
