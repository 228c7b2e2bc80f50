// Completeness: the server's total per server day against the local count. Read once, then printed
// twice: as the summary's one-line verdict and as the section with every gap.
import type { EntityBacklogRow } from "../../store/entityBacklog.ts";
import { type CoverageRow, UNPLACED_RECORDS_SQL } from "../../store/reportQueries.ts";
import { entityBacklogPhrases } from "../entityBacklogText.ts";
import { mdTable, mdText } from "../escape.ts";
import { offsetText } from "../serverDays.ts";
import {
  type ComplianceContext,
  HEADINGS,
  heading,
  type MarkdownOut,
  querySection,
  run,
} from "./markdown.ts";

export interface Completeness {
  /** Every server day the period overlaps (empty when the store has no dated records). */
  days: string[];
  /** Days with coverage data, and those of them where every filter's local count equals the server's. */
  covered: string[];
  matching: string[];
  /** Coverage rows whose local count differs from the server's total. */
  gaps: CoverageRow[];
  /** Days with no coverage data at all, over before the report or check was made. */
  uncovered: string[];
  /** Days with no coverage data that had not begun or ended then (today, a future day): the next syncs count them. */
  notOver: string[];
  /** Days not over yet when checked (their total may still grow). */
  open: string[];
  /** Stored records without an instant. */
  unplaced: number;
  /**
   * Quarantined records (held, not validated, so in no list or CSV) of the period's server days, and
   * those whose date is unreadable and whose request reached beyond them, so may be of the period.
   */
  quarantined: { records: number; maybe: number };
  /** Per kind of entity read: entities known and pending (empty: entity history never read). */
  entityBacklog: EntityBacklogRow[];
}

/** Server days from..to inclusive (YYYY-MM-DD). */
function dayRange(from: string, to: string): string[] {
  const days: string[] = [];
  for (let t = Date.parse(`${from}T00:00:00Z`); t <= Date.parse(`${to}T00:00:00Z`); t += 86_400_000)
    days.push(new Date(t).toISOString().slice(0, 10));
  return days;
}

/** Also read by `flagtrail check`'s completeness control: one decision of what a gap day is. */
export async function readCompleteness(
  ctx: Pick<ComplianceContext, "snapshot" | "params" | "serverDays" | "coverage"> & { now: number },
): Promise<Completeness> {
  const unplaced = (await run(ctx, "unplaced"))[0]?.records ?? 0;
  const entityBacklog = await run(ctx, "entityBacklog");
  const { serverDays } = ctx;
  if (serverDays === null)
    return {
      days: [],
      covered: [],
      matching: [],
      gaps: [],
      uncovered: [],
      notOver: [],
      open: [],
      unplaced,
      quarantined: { records: 0, maybe: 0 },
      entityBacklog,
    };
  const quarantined = (await run(ctx, "quarantined"))[0] ?? { records: 0, maybe: 0 };
  const rows = ctx.coverage ?? (await run(ctx, "coverage"));
  const byDay = new Map<string, CoverageRow[]>();
  for (const row of rows) byDay.set(row.day, [...(byDay.get(row.day) ?? []), row]);
  const days = dayRange(serverDays.first.day, serverDays.last.day);
  const covered = days.filter((d) => byDay.has(d));
  // The server's day at `now`, in the offset of the period's last day: it and later days are not over.
  const today = new Date(ctx.now + serverDays.last.offsetMinutes * 60_000).toISOString().slice(0, 10);
  return {
    days,
    covered,
    matching: covered.filter((d) => byDay.get(d)!.every((r) => r.local_count === r.server_total)),
    gaps: rows.filter((r) => r.local_count !== r.server_total),
    uncovered: days.filter((d) => !byDay.has(d) && d < today),
    notOver: days.filter((d) => !byDay.has(d) && d >= today),
    open: [...new Set(rows.filter((r) => r.day_closed === 0).map((r) => r.day))],
    unplaced,
    quarantined,
    entityBacklog,
  };
}

/** Server days that are not reconciled: a gap, no coverage data, or not over when checked. */
export function unreconciledDays(c: Completeness): string[] {
  const bad = new Set([...c.gaps.map((g) => g.day), ...c.uncovered, ...c.notOver, ...c.open]);
  return c.days.filter((d) => bad.has(d));
}

/** The summary's one line: every server day reconciled, or which are not and why. */
export function completenessVerdict(c: Completeness): string {
  if (c.days.length === 0) return "**Not checked**: the store holds no dated records.";
  if (c.covered.length === 0)
    return (
      `**Not checked**: none of the ${c.days.length} server days ${c.days[0]} to ${c.days.at(-1)} ` +
      "has coverage data (was the period synced?)."
    );
  const bad = unreconciledDays(c);
  if (bad.length === 0)
    return `**Complete**: all ${c.days.length} server days reconciled.${quarantineNote(c)}`;
  const gapDays = new Set(c.gaps.map((g) => g.day));
  const why = (d: string) =>
    gapDays.has(d)
      ? "gap"
      : c.uncovered.includes(d)
        ? "no coverage data"
        : c.notOver.includes(d)
          ? "not over yet"
          : "not over when checked";
  return (
    `**Not complete**: ${bad.length} of ${c.days.length} server days not reconciled: ` +
    `${bad.map((d) => `${d} (${why(d)})`).join(", ")}.${quarantineNote(c)}`
  );
}

/**
 * The verdict's note on quarantined records: coverage counts them (the server lists them), so a day can be
 * reconciled while its quarantined records are in none of the report's lists.
 */
function quarantineNote(c: Completeness): string {
  const { records, maybe } = c.quarantined;
  const notes: string[] = [];
  if (records > 0)
    notes.push(
      `${records} ${records === 1 ? "record" : "records"} of these days ${records === 1 ? "is" : "are"} ` +
        "quarantined (held but not validated, so not listed)",
    );
  if (maybe > 0)
    notes.push(
      `${maybe} quarantined ${maybe === 1 ? "record" : "records"} with no readable date may be of them`,
    );
  return notes.length === 0 ? "" : ` **Not listed**: ${notes.join("; ")}.`;
}

function writeDayNotes(out: MarkdownOut, ctx: ComplianceContext, c: Completeness): void {
  const { first, last } = ctx.serverDays!;
  const { period } = ctx;
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
    `Coverage data (the server's total per server day, fetched by the sync) exists for ${c.covered.length} of ` +
      `these ${c.days.length} server days. On ${c.matching.length} of them the local count equals the server's ` +
      "total for every filter synced. Local counts are recounted from this snapshot of the store (stored " +
      "records plus quarantined ones); the server's totals are as of the check.",
  );
  out.line();
}

function writeGaps(out: MarkdownOut, ctx: ComplianceContext, c: Completeness): void {
  if (c.gaps.length === 0) {
    out.line("No server day with coverage data has a gap.");
    return;
  }
  out.line(`Server days with a gap (${new Set(c.gaps.map((g) => g.day)).size}):`);
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
      c.gaps.map((g) => [
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

/**
 * How much of the entity history is read (left out when it never was): an entity pass spends at most a
 * budget of requests, and what it leaves is pending, so the entity sections may be partial.
 */
function writeEntityBacklog(out: MarkdownOut, ctx: ComplianceContext, c: Completeness): void {
  if (c.entityBacklog.length === 0) return;
  const pending = c.entityBacklog.some((row) => row.pending > 0);
  out.line(
    `Entity history, as of the last entity pass: ${entityBacklogPhrases(c.entityBacklog).join(", ")}. ` +
      (pending
        ? "**Partial**: the entity sections below do not cover the pending ones yet; the next syncs read them first, within their request budget."
        : "Nothing is pending."),
  );
  querySection(out, ctx, "entityBacklog");
  out.line();
}

export function writeCompleteness(out: MarkdownOut, ctx: ComplianceContext, c: Completeness): void {
  const { serverDays, period } = ctx;
  heading(out, ctx, 2, HEADINGS.completeness);
  out.line();
  writeEntityBacklog(out, ctx, c);
  if (serverDays === null) {
    out.line("The store holds no dated records, so no server day can be checked.");
    out.line();
    querySection(out, ctx, "unplaced");
    return;
  }
  const { first, last } = serverDays;
  const zone =
    first.offsetMinutes === last.offsetMinutes
      ? offsetText(first.offsetMinutes)
      : `${offsetText(first.offsetMinutes)} to ${offsetText(last.offsetMinutes)}`;
  out.line(
    "The sync checks completeness per **server day**: the API's calendar day in the server's zone " +
      `(${zone}, read from the records' time texts), which need not be the report's days in ` +
      `${mdText(period.timeZone)}. The period overlaps the ${c.days.length} server days ${first.day} to ${last.day}.`,
  );
  writeDayNotes(out, ctx, c);
  writeGaps(out, ctx, c);
  out.line();
  if (c.uncovered.length === 0) out.line("Every server day the period overlaps has coverage data.");
  else
    out.line(`Server days with no coverage data at all (${c.uncovered.length}): ${c.uncovered.join(", ")}.`);
  out.line();
  if (c.open.length > 0) {
    out.line(`Server days not yet over when checked (their total may still grow): ${c.open.join(", ")}.`);
    out.line();
  }
  if (c.notOver.length > 0) {
    out.line(
      `Server days not over when this report was made (no sync has counted them yet): ${c.notOver.join(", ")}.`,
    );
    out.line();
  }
  writeQuarantined(out, c);
  if (c.unplaced > 0) {
    out.line(
      `${c.unplaced} stored records have a date or time that could not be parsed: they have no instant, so no ` +
        "section below lists them, but those whose date text was readable count on their server day in the " +
        `completeness check above (\`${UNPLACED_RECORDS_SQL}\`).`,
    );
    out.line();
  }
  querySection(out, ctx, "coverage", "quarantined", "unplaced");
}

function writeQuarantined(out: MarkdownOut, c: Completeness): void {
  const { records, maybe } = c.quarantined;
  out.line(
    records === 0
      ? "No quarantined record is of these server days."
      : `**${records} quarantined ${records === 1 ? "record is" : "records are"} of these server days**: ` +
          "the sync held them (kept whole in the store's `quarantine` table with every validation issue) but " +
          "could not validate them, so no section or CSV of this report lists them. They count in the local " +
          "counts above, as the server lists them. A quarantined record is of a server day by its own date; " +
          "one whose date cannot be read, when the narrowest request that returned it lay within these days.",
  );
  out.line();
  if (maybe > 0) {
    out.line(
      `${maybe} more quarantined ${maybe === 1 ? "record has" : "records have"} no readable date and ` +
        `${maybe === 1 ? "was" : "were"} returned only by requests reaching beyond these days: ` +
        `${maybe === 1 ? "it" : "they"} may be of the period.`,
    );
    out.line();
  }
}
