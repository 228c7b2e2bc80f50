// The descriptive lists (every experiment state change, every config edit) summarised per entity: a
// month of them is most of a megabyte of Markdown, and every row is in the CSVs already. The table is
// also how a long finding list is shown (sections/reviews.ts).
import type { EntitySummaryRow, ReportQueryName } from "../../store/reportQueries.ts";
import { mdRow, mdText } from "../escape.ts";
import { allRowsIn, type CapNote, CappedTable, MARKDOWN_CAPS, mostFirst } from "./capped.ts";
import {
  batches,
  type ComplianceContext,
  heading,
  type MarkdownOut,
  querySection,
  time,
} from "./markdown.ts";

interface EntityTotals {
  name: string;
  changes: number;
  ruleChanges: number;
  firstAt: number;
  lastAt: number;
  byType: Map<string, number>;
  byPerson: Map<string, number>;
}

/** `a (3), b (1)`: most first, then by name. */
function tally(counts: ReadonlyMap<string, number>, mdCell: (text: string) => string): string {
  return [...counts]
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
    .map(([key, n]) => `${mdCell(key)} (${n})`)
    .join(", ");
}

/**
 * mdText remembered per text: a table's action types and people recur on every one of its rows (a
 * month over 1M records: ~2,000 rows, each escaping dozens of the same names). Lives for one table.
 */
function escapeOnce(): (text: string) => string {
  const seen = new Map<string, string>();
  return (text) => {
    let escaped = seen.get(text);
    if (escaped === undefined) {
      escaped = mdText(text);
      seen.set(text, escaped);
    }
    return escaped;
  };
}

function add(map: Map<string, number>, key: string, n: number): void {
  map.set(key, (map.get(key) ?? 0) + n);
}

/** A query whose rows are EntitySummaryRow, ordered by entity name. */
export type EntitySummaryQuery = Extract<
  ReportQueryName,
  "experimentSummary" | "configSummary" | "unreviewedSummary"
>;

/** How a per-entity table is headed: the entity column's word, and whether it counts rule changes. */
export interface EntityTable {
  /** What the entities are called, for the empty case and the column ("Experiment", "Config"). */
  noun: string;
  ruleChanges: boolean;
  /**
   * Set for a descriptive table, capped in the published Markdown to MARKDOWN_CAPS.entities rows (the
   * entities with the most changes): the CSV holding every change. A finding's table is never capped.
   */
  cappedTo?: "experimentStateChanges" | "configEdits";
}

interface EntitySection extends EntityTable {
  title: string;
  summary: "experimentSummary" | "configSummary";
  /** The query that lists every row, printed under the section for `flagtrail sql`. */
  full: ReportQueryName;
  csv: string;
}

export const EXPERIMENT_SECTION: EntitySection = {
  title: "Experiment state changes per experiment",
  noun: "experiment",
  summary: "experimentSummary",
  full: "experimentTimelines",
  csv: "experiment-state-changes",
  ruleChanges: false,
  cappedTo: "experimentStateChanges",
};

export const CONFIG_SECTION: EntitySection = {
  title: "Config edits per config",
  noun: "config",
  summary: "configSummary",
  full: "configEdits",
  csv: "config-edits",
  ruleChanges: true,
  cappedTo: "configEdits",
};

function rowOf(
  ctx: ComplianceContext,
  section: EntityTable,
  e: EntityTotals,
  mdCell: (text: string) => string,
): string {
  return mdRow([
    mdText(e.name) || "(no name)",
    String(e.changes),
    ...(section.ruleChanges ? [String(e.ruleChanges)] : []),
    time(ctx, e.firstAt),
    time(ctx, e.lastAt),
    tally(e.byType, mdCell),
    tally(e.byPerson, mdCell),
  ]);
}

/** The notes around a capped per-entity table: how many of how many, and where all of them are. */
function capNote(
  ctx: ComplianceContext,
  { noun, cappedTo }: EntityTable,
  shown: readonly EntityTotals[],
  totals: { entities: number; changes: number },
): CapNote {
  const plural = `${noun}s`;
  const where = allRowsIn(ctx, cappedTo!, "the second query below");
  const changes = shown.reduce((sum, e) => sum + e.changes, 0);
  return {
    before:
      `**${shown.length} of ${totals.entities} ${plural} shown**, those with the most changes (${changes} of ` +
      `the ${totals.changes} changes); every change of all ${totals.entities} is a row of ${where}.`,
    after: `… and ${totals.entities - shown.length} more ${plural}, not shown: their changes are rows of ${where}.`,
  };
}

export async function writeEntitySummary(
  out: MarkdownOut,
  ctx: ComplianceContext,
  section: EntitySection,
): Promise<void> {
  heading(out, ctx, 2, section.title);
  out.line();
  out.line(
    `One row per ${section.noun}: its changes in the period, the first and last, by action type and by ` +
      `person. Every change is a row of the ${section.csv} CSV; the second query below lists them here.`,
  );
  out.line();
  const fold = ctx.summariesFromCsv?.[section.summary];
  const entities = fold
    ? fold.write(out, ctx, section)
    : await writeEntityTable(out, ctx, section.summary, section);
  if (entities === 0) out.line(`No ${section.noun} changes in the period.`);
  querySection(out, ctx, section.summary, section.full);
}

function newTotals(row: EntitySummaryRow): EntityTotals {
  return {
    name: row.name,
    changes: 0,
    ruleChanges: 0,
    firstAt: row.first_at,
    lastAt: row.last_at,
    byType: new Map(),
    byPerson: new Map(),
  };
}

const UNKNOWN_PERSON = "(unknown)";

/** Adds one summary row (an entity's changes by one person of one action type) to the entity's totals. */
function addRow(
  e: EntityTotals,
  row: EntitySummaryRow,
  type = row.action_type,
  person = row.updated_by ?? UNKNOWN_PERSON,
): void {
  e.changes += row.changes;
  e.ruleChanges += row.rule_changes;
  e.firstAt = Math.min(e.firstAt, row.first_at);
  e.lastAt = Math.max(e.lastAt, row.last_at);
  add(e.byType, type, row.changes);
  add(e.byPerson, person, row.changes);
}

/** The table's header: the entity, its changes (and rule changes), first, last, by type, by person. */
function headerOf(table: EntityTable): string[] {
  const header = [table.noun[0]!.toUpperCase() + table.noun.slice(1), "Changes"];
  if (table.ruleChanges) header.push("Rule changes");
  header.push("First", "Last", "Action types", "People");
  return header;
}

/**
 * Writes the table's rows as they come (the capped Markdown's at `end`: see cappedTo); `end` returns
 * the number of entities (0: nothing written).
 */
function tableWriter(out: MarkdownOut, ctx: ComplianceContext, table: EntityTable) {
  const mdCell = escapeOnce();
  const capped = new CappedTable<EntityTotals>(out, {
    header: headerOf(table),
    cap: table.cappedTo
      ? { rows: MARKDOWN_CAPS.entities, rank: mostFirst((e) => e.changes), show: "ranked" }
      : null,
    render: (e) => rowOf(ctx, table, e, mdCell),
  });
  let changes = 0;
  return {
    write(e: EntityTotals): void {
      changes += e.changes;
      capped.add(e);
    },
    end: () => capped.end((shown, entities) => capNote(ctx, table, shown, { entities, changes })),
  };
}

/**
 * One table row per entity from `query`, whose rows come ordered by entity name: one entity's totals
 * are complete when the name changes. Returns the number of entities (0: nothing written).
 */
export async function writeEntityTable(
  out: MarkdownOut,
  ctx: ComplianceContext,
  query: EntitySummaryQuery,
  table: EntityTable,
): Promise<number> {
  const writer = tableWriter(out, ctx, table);
  let current = null as EntityTotals | null;
  for await (const batch of batches(ctx, query)) {
    for (const row of batch as readonly EntitySummaryRow[]) {
      if (current?.name !== row.name) {
        if (current) writer.write(current);
        current = newTotals(row);
      }
      addRow(current, row);
    }
  }
  if (current) writer.write(current);
  return writer.end();
}

/**
 * Text order by Unicode code point, which is UTF-8 byte order: SQLite's BINARY and PostgreSQL's "C"
 * collation, by which the summary queries sort names. (JavaScript's < compares UTF-16 units, which
 * puts characters beyond U+FFFF before U+E000–U+FFFF.)
 */
function codePointOrder(a: string, b: string): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i += 1) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    const surrogate = (x >= 0xd800 && x <= 0xdfff) || (y >= 0xd800 && y <= 0xdfff);
    return surrogate ? a.codePointAt(i)! - b.codePointAt(i)! : x - y;
  }
  return a.length - b.length;
}

/**
 * The same table from rows folded as they come, in any order (the unreviewed changes, while their CSV is
 * written: the summary then needs no second run of their query). Holds one entry per entity.
 */
export class EntityFold {
  private readonly entities = new Map<string, EntityTotals>();
  /**
   * One string object per action type and person: each row brings new ones, and an entity's small maps
   * then compared their text with every key's instead of matching the one string (folding the one-month
   * 1M-record report's 58,000 CSV rows: 85 → 43 ms).
   */
  private readonly texts = new Map<string, string>();

  private same(text: string): string {
    const known = this.texts.get(text);
    if (known !== undefined) return known;
    this.texts.set(text, text);
    return text;
  }

  add(row: EntitySummaryRow): void {
    let e = this.entities.get(row.name);
    if (e === undefined) {
      e = newTotals(row);
      this.entities.set(row.name, e);
    }
    addRow(e, row, this.same(row.action_type), this.same(row.updated_by ?? UNKNOWN_PERSON));
  }

  /** Writes the table in name order, as writeEntityTable would from the summary query; returns the entities. */
  write(out: MarkdownOut, ctx: ComplianceContext, table: EntityTable): number {
    const writer = tableWriter(out, ctx, table);
    const names = [...this.entities.keys()].sort(codePointOrder);
    for (const name of names) writer.write(this.entities.get(name)!);
    return writer.end();
  }
}
