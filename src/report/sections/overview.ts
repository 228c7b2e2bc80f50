// Header, completeness (coverage) and activity counts and the daily chart.
import { type ActionTypeCount, type CoverageRow, UNPLACED_RECORDS_SQL } from "../../store/reportQueries.ts";
import { mdRow, mdTable, mdText } from "../escape.ts";
import { offsetText } from "../serverDays.ts";
import { batches, type ComplianceContext, querySection, run, type TextFile, time } from "./markdown.ts";

export function writeHeader(out: TextFile, ctx: ComplianceContext, records: number): void {
  const { period } = ctx;
  out.line(`# Compliance report ${period.from} to ${period.to}`);
  out.line();
  if (ctx.notice) {
    out.line(`> **${mdText(ctx.notice)}**`);
    out.line();
  }
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
    "Times are shown in the report's time zone. Each section ends with the SQL behind it and its " +
      'parameters as `--param name=value` arguments: `flagtrail sql --db <store> --param … "<query>"` ' +
      "re-runs it on the store.",
  );
  out.line();
}

/** Server days from..to inclusive (YYYY-MM-DD). */
function dayRange(from: string, to: string): string[] {
  const days: string[] = [];
  for (let t = Date.parse(`${from}T00:00:00Z`); t <= Date.parse(`${to}T00:00:00Z`); t += 86_400_000)
    days.push(new Date(t).toISOString().slice(0, 10));
  return days;
}

export async function writeCompleteness(out: TextFile, ctx: ComplianceContext): Promise<void> {
  const { serverDays, period } = ctx;
  const unplaced = (await run(ctx, "unplaced"))[0]?.records ?? 0;
  out.line("## Completeness");
  out.line();
  if (serverDays === null) {
    out.line("The store holds no dated records, so no server day can be checked.");
    out.line();
    querySection(out, ctx, "unplaced");
    return;
  }
  const rows = await run(ctx, "coverage");
  const byDay = new Map<string, CoverageRow[]>();
  for (const row of rows) {
    const list = byDay.get(row.day) ?? [];
    list.push(row);
    byDay.set(row.day, list);
  }
  const { first, last } = serverDays;
  const days = dayRange(first.day, last.day);
  const covered = days.filter((d) => byDay.has(d));
  const matching = covered.filter((d) => byDay.get(d)!.every((r) => r.local_count === r.server_total));
  const gaps = rows.filter((r) => r.local_count !== r.server_total);
  const open = rows.filter((r) => r.day_closed === 0);
  const uncovered = days.filter((d) => !byDay.has(d));
  const zone =
    first.offsetMinutes === last.offsetMinutes
      ? offsetText(first.offsetMinutes)
      : `${offsetText(first.offsetMinutes)} to ${offsetText(last.offsetMinutes)}`;

  out.line(
    "The sync checks completeness per **server day**: the API's calendar day in the server's zone " +
      `(${zone}, read from the records' time texts), which need not be the report's days in ` +
      `${mdText(period.timeZone)}. The period overlaps the ${days.length} server days ${first.day} to ${last.day}.`,
  );
  const partial: string[] = [];
  const cutStart = first.dayStart < period.start;
  const cutEnd = last.dayEnd > period.end;
  if (first.day === last.day && (cutStart || cutEnd))
    partial.push(`${first.day} (only ${ctx.formatTime(period.start)} to ${ctx.formatTime(period.end)})`);
  else {
    if (cutStart) partial.push(`${first.day} (only from ${ctx.formatTime(period.start)} on)`);
    if (cutEnd) partial.push(`${last.day} (only until ${ctx.formatTime(period.end)})`);
  }
  if (partial.length > 0) {
    out.line();
    out.line(
      `Partly inside the period: ${partial.join(", ")}. Their check covers the whole server day, ` +
        "including hours outside the report.",
    );
  }
  out.line();
  out.line(
    `Coverage data (the server's total per server day, fetched by the sync) exists for ${covered.length} of ` +
      `these ${days.length} server days. On ${matching.length} of them the local count equals the server's ` +
      "total for every filter synced. Local counts are recounted from this snapshot of the store (stored " +
      "records plus quarantined ones); the server's totals are as of the check.",
  );
  out.line();
  if (gaps.length === 0) {
    out.line("No server day with coverage data has a gap.");
  } else {
    out.line(`Server days with a gap (${new Set(gaps.map((g) => g.day)).size}):`);
    out.line();
    out.line(
      mdTable(
        [
          "Server day",
          "Filter",
          "Server total",
          "Local count",
          "Difference",
          "Local count at sync",
          "Checked at",
        ],
        gaps.map((g) => [
          g.day,
          mdText(g.filter_key),
          String(g.server_total),
          String(g.local_count),
          String(g.local_count - g.server_total),
          String(g.local_count_at_sync),
          ctx.formatTime(g.checked_at),
        ]),
      ),
    );
  }
  out.line();
  if (uncovered.length === 0) {
    out.line("Every server day the period overlaps has coverage data.");
  } else {
    out.line(`Server days with no coverage data at all (${uncovered.length}): ${uncovered.join(", ")}.`);
  }
  out.line();
  if (open.length > 0) {
    out.line(
      `Server days not yet over when checked (their total may still grow): ${[...new Set(open.map((r) => r.day))].join(", ")}.`,
    );
    out.line();
  }
  if (unplaced > 0) {
    out.line(
      `${unplaced} stored records have a date or time that could not be parsed: they have no instant, so no ` +
        "section below lists them, but those whose date text was readable count on their server day in the " +
        `completeness check above (\`${UNPLACED_RECORDS_SQL}\`).`,
    );
    out.line();
  }
  querySection(out, ctx, "coverage", "unplaced");
}

export async function writeActivity(
  out: TextFile,
  ctx: ComplianceContext,
  byType: readonly ActionTypeCount[],
): Promise<void> {
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
  querySection(out, ctx, "byActionType");

  const byPerson = await run(ctx, "byPerson");
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
  querySection(out, ctx, "byPerson");
}

export async function writeDaily(out: TextFile, ctx: ComplianceContext): Promise<void> {
  const rows = await run(ctx, "daily");
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
  querySection(out, ctx, "daily");
}

export async function writeExperimentTimelines(out: TextFile, ctx: ComplianceContext): Promise<void> {
  out.line("## Experiment state timelines");
  out.line();
  let current: string | null = null;
  let experiments = 0;
  for await (const batch of batches(ctx, "experimentTimelines")) {
    for (const row of batch) {
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
  }
  if (experiments === 0) out.line("No experiment state changes in the period.");
  querySection(out, ctx, "experimentTimelines");
}
