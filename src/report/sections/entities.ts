// The descriptive lists (every experiment state change, every config edit) summarised per entity: a
// month of them is most of a megabyte of Markdown, and every row is in the CSVs already.
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
function tally(counts: ReadonlyMap<string, number>): string {
  return [...counts]
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
    .map(([key, n]) => `${mdText(key)} (${n})`)
    .join(", ");
}

function add(map: Map<string, number>, key: string, n: number): void {
  map.set(key, (map.get(key) ?? 0) + n);
}

interface EntitySection {
  title: string;
  /** What the entities are called, for the empty case and the column ("Experiment", "Config"). */
  noun: string;
  summary: Extract<ReportQueryName, "experimentSummary" | "configSummary">;
  /** The query that lists every row, printed under the section for `flagtrail sql`. */
  full: ReportQueryName;
  csv: string;
  ruleChanges: boolean;
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

function writeRow(out: TextFile, ctx: ComplianceContext, section: EntitySection, e: EntityTotals): void {
  out.line(
    mdRow([
      mdText(e.name) || "(no name)",
      String(e.changes),
      ...(section.ruleChanges ? [String(e.ruleChanges)] : []),
      time(ctx, e.firstAt),
      time(ctx, e.lastAt),
      tally(e.byType),
      tally(e.byPerson),
    ]),
  );
}

/** Rows come ordered by entity name: one entity's totals are complete when the name changes. */
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
  let current = null as EntityTotals | null;
  let entities = 0;
  for await (const batch of batches(ctx, section.summary)) {
    for (const row of batch as readonly EntitySummaryRow[]) {
      if (current?.name !== row.name) {
        if (current) writeRow(out, ctx, section, current);
        if (entities === 0) {
          const header = [section.noun[0]!.toUpperCase() + section.noun.slice(1), "Changes"];
          if (section.ruleChanges) header.push("Rule changes");
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
  if (current) writeRow(out, ctx, section, current);
  if (entities === 0) out.line(`No ${section.noun} changes in the period.`);
  querySection(out, ctx, section.summary, section.full);
}
