// The descriptive lists (every experiment state change, every config edit) summarised per entity: a
// month of them is most of a megabyte of Markdown, and every row is in the CSVs already. The table is
// also how a long finding list is shown (sections/reviews.ts).
import type { EntitySummaryRow, ReportQueryName } from "../../store/reportQueries.ts";
import { mdRow, mdText } from "../escape.ts";
import { batches, type ComplianceContext, querySection, type TextFile, time } from "./markdown.ts";

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
}

interface EntitySection extends EntityTable {
  title: string;
  summary: EntitySummaryQuery;
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
};

export const CONFIG_SECTION: EntitySection = {
  title: "Config edits per config",
  noun: "config",
  summary: "configSummary",
  full: "configEdits",
  csv: "config-edits",
  ruleChanges: true,
};

function writeRow(
  out: TextFile,
  ctx: ComplianceContext,
  section: EntityTable,
  e: EntityTotals,
  mdCell: (text: string) => string,
): void {
  out.line(
    mdRow([
      mdText(e.name) || "(no name)",
      String(e.changes),
      ...(section.ruleChanges ? [String(e.ruleChanges)] : []),
      time(ctx, e.firstAt),
      time(ctx, e.lastAt),
      tally(e.byType, mdCell),
      tally(e.byPerson, mdCell),
    ]),
  );
}

export async function writeEntitySummary(
  out: TextFile,
  ctx: ComplianceContext,
  section: EntitySection,
): Promise<void> {
  out.line(`## ${section.title}`);
  out.line();
  out.line(
    `One row per ${section.noun}: its changes in the period, the first and last, by action type and by ` +
      `person. Every change is a row of the ${section.csv} CSV; the second query below lists them here.`,
  );
  out.line();
  const entities = await writeEntityTable(out, ctx, section.summary, section);
  if (entities === 0) out.line(`No ${section.noun} changes in the period.`);
  querySection(out, ctx, section.summary, section.full);
}

/**
 * One table row per entity from `query`, whose rows come ordered by entity name: one entity's totals
 * are complete when the name changes. Returns the number of entities (0: nothing written).
 */
export async function writeEntityTable(
  out: TextFile,
  ctx: ComplianceContext,
  query: EntitySummaryQuery,
  table: EntityTable,
): Promise<number> {
  let current = null as EntityTotals | null;
  let entities = 0;
  const mdCell = escapeOnce();
  for await (const batch of batches(ctx, query)) {
    for (const row of batch as readonly EntitySummaryRow[]) {
      if (current?.name !== row.name) {
        if (current) writeRow(out, ctx, table, current, mdCell);
        if (entities === 0) {
          const header = [table.noun[0]!.toUpperCase() + table.noun.slice(1), "Changes"];
          if (table.ruleChanges) header.push("Rule changes");
          header.push("First", "Last", "Action types", "People");
          out.line(mdRow(header));
          out.line(mdRow(header.map(() => "---")));
        }
        entities += 1;
        current = {
          name: row.name,
          changes: 0,
          ruleChanges: 0,
          firstAt: row.first_at,
          lastAt: row.last_at,
          byType: new Map(),
          byPerson: new Map(),
        };
      }
      const e: EntityTotals = current;
      e.changes += row.changes;
      e.ruleChanges += row.rule_changes;
      e.firstAt = Math.min(e.firstAt, row.first_at);
      e.lastAt = Math.max(e.lastAt, row.last_at);
      add(e.byType, row.action_type, row.changes);
      add(e.byPerson, row.updated_by ?? "(unknown)", row.changes);
    }
  }
  if (current) writeRow(out, ctx, table, current, mdCell);
  return entities;
}
