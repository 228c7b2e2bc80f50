// The activity chart: a bar per day up to six weeks, a bar per week (Monday to Sunday, cut by the
// period's ends) beyond, so that a quarter has ~13 bars instead of ~90; axis labels are MM-DD (short beyond two weeks).
import { mdTable, mdText } from "../escape.ts";
import { type ComplianceContext, heading, type MarkdownOut, querySection, run } from "./markdown.ts";

/** Longest period still drawn a bar per day. */
const DAILY_BARS_MAX_DAYS = 42;

export interface ChartBucket {
  /** First and last day of the bucket (YYYY-MM-DD; equal for a daily bar). */
  from: string;
  to: string;
  records: number;
}

/** Days (in order) into daily buckets, or weekly ones beyond DAILY_BARS_MAX_DAYS. */
export function chartBuckets(days: readonly { day: string; records: number }[]): ChartBucket[] {
  if (days.length <= DAILY_BARS_MAX_DAYS)
    return days.map((d) => ({ from: d.day, to: d.day, records: d.records }));
  const buckets: ChartBucket[] = [];
  for (const d of days) {
    const monday = new Date(`${d.day}T00:00:00Z`).getUTCDay() === 1;
    const last = buckets.at(-1);
    if (!last || monday) buckets.push({ from: d.day, to: d.day, records: d.records });
    else {
      last.to = d.day;
      last.records += d.records;
    }
  }
  return buckets;
}

/** More bars than this get short labels: 31 of MM-DD overlap on a page's width. */
const FULL_LABELS_MAX = 14;

/**
 * MM-DD per bar; beyond FULL_LABELS_MAX bars, MM-DD on every 7th (from the first) and the day of the
 * month on the others. Labels stay distinct (Mermaid merges equal categories into one bar): a short one
 * already used falls back to MM-DD.
 */
function axisLabels(buckets: readonly ChartBucket[]): string[] {
  if (buckets.length <= FULL_LABELS_MAX) return buckets.map((b) => b.from.slice(5));
  const used = new Set<string>();
  return buckets.map((b, k) => {
    const short = String(Number(b.from.slice(8)));
    const label = k % 7 === 0 || used.has(short) ? b.from.slice(5) : short;
    used.add(label);
    return label;
  });
}

export async function writeDaily(out: MarkdownOut, ctx: ComplianceContext): Promise<void> {
  const rows = await run(ctx, "daily");
  const buckets = chartBuckets(rows);
  const weekly = rows.length > DAILY_BARS_MAX_DAYS;
  const max = Math.max(1, ...buckets.map((b) => b.records));
  const unit = weekly ? "week" : "day";
  const years = [...new Set(rows.map((r) => r.day.slice(0, 4)))].join("–");
  heading(out, ctx, 2, `${weekly ? "Weekly" : "Daily"} activity`);
  out.line();
  out.line(
    `Records per ${unit} in ${mdText(ctx.period.timeZone)}` +
      (weekly ? " (weeks from Monday, cut by the period's ends; labelled by their first day)." : "."),
  );
  out.line();
  out.line("```mermaid");
  out.line("xychart-beta");
  out.line(`    title "Records per ${unit}, ${years}"`);
  out.line(
    `    x-axis [${axisLabels(buckets)
      .map((l) => `"${l}"`)
      .join(", ")}]`,
  );
  out.line(`    y-axis "Records" 0 --> ${max}`);
  out.line(`    bar [${buckets.map((b) => b.records).join(", ")}]`);
  out.line("```");
  out.line();
  // The same numbers as text, for renderers without Mermaid: a row per week, or per day in weeks.
  out.line(
    mdTable(
      [weekly ? "Week" : "Day", "Records"],
      buckets.map((b) => [b.from === b.to ? b.from : `${b.from} to ${b.to}`, String(b.records)]),
    ),
  );
  querySection(out, ctx, "daily");
}
