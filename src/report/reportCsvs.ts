// The CSVs of a report set: experiment state changes, config edits, unreviewed changes and the findings;
// with several projects, each has a first column `project` and every project's rows in turn.
import { join } from "node:path";
import type { CsvRow, EntitySummaryRow } from "../store/reportQueries.ts";
import { BOM, type CsvColumn, csvField, csvRecord, rowRecord, writeCsv } from "./csv.ts";
import { neutraliseFormula } from "./escape.ts";
import { isoFormatter } from "./period.ts";
import { projectBatches, projectColumns } from "./projects.ts";
import { type ReportArgs, type ReportPart, reportFileNames, type WrittenFile } from "./reportParts.ts";
import { findingColumns, type ReportFinding } from "./sections/controls.ts";
import { TextFile } from "./sections/markdown.ts";

/** `tickets`: the ticket key per record id, a last column when a ticket-reference control is configured. */
function csvColumns(
  formatTime: (ms: number) => string,
  tickets: ReadonlyMap<string, string> | null,
): CsvColumn<CsvRow>[] {
  const columns: CsvColumn<CsvRow>[] = [
    { header: "time", value: (r) => formatTime(r.occurred_at) },
    { header: "epoch_ms", value: (r) => r.occurred_at },
    { header: "record_id", value: (r) => r.id },
    { header: "updated_by", value: (r) => r.updated_by },
    { header: "updated_by_user_id", value: (r) => r.updated_by_user_id },
    { header: "updated_by_email", value: (r) => r.modifier_email },
    { header: "entity_name", value: (r) => r.name },
    { header: "action_type", value: (r) => r.action_type },
    { header: "change_log", value: (r) => r.change_log },
    { header: "rule_diff_summary", value: (r) => r.rule_diff_summary },
  ];
  if (tickets) columns.push({ header: "ticket", value: (r) => tickets.get(r.id) ?? null });
  return columns;
}

const CHANGE_CSVS = ["experimentStateChanges", "configEdits", "unreviewedChanges"] as const;

/**
 * The three change CSVs (experiment state changes, config edits, unreviewed changes) from one read of
 * the period's changes (ReportSnapshot.changes): an unreviewed change is a row of its category's CSV and
 * of the unreviewed changes' one, the same line in both (the columns are the same), formatted once.
 * Written a buffer at a time, fsync'd when closed.
 */
export async function writeCsvs(
  parts: readonly ReportPart[],
  staging: string,
  args: ReportArgs,
): Promise<WrittenFile[]> {
  const names = reportFileNames(args.period);
  const columns = csvColumns(isoFormatter(args.period.timeZone), ticketsOf(parts, args));
  const several = parts.length > 1;
  const headers = [...(several ? ["project"] : []), ...columns.map((c) => c.header)];
  const files: TextFile[] = [];
  try {
    for (const key of CHANGE_CSVS) {
      const file = new TextFile(join(staging, names[key]));
      files.push(file);
      if (args.bom) file.write(BOM);
      file.write(csvRecord(headers));
    }
    const [experiments, configs, unreviewed] = files as [TextFile, TextFile, TextFile];
    for (const part of parts) {
      // A project's first column, as projectColumns writes it.
      const prefix = several ? `${csvField(neutraliseFormula(part.project))},` : "";
      for await (const batch of part.snapshot.changes!(part.params)) {
        for (const row of batch) {
          const line = prefix + rowRecord(columns, row);
          const config = row.category === "config_edit";
          (config ? configs : experiments).write(line);
          part.counts[config ? "configEdits" : "experimentStateChanges"] += 1;
          part.folds?.[config ? "configSummary" : "experimentSummary"].add(summaryEntry(row));
          if (row.unreviewed !== 1) continue;
          unreviewed.write(line);
          part.counts.unreviewedChanges += 1;
          // The unreviewed changes' table counts no rule changes.
          part.folds?.unreviewed.add(summaryEntry(row, 0));
        }
      }
    }
  } finally {
    closeAll(files);
  }
  return CHANGE_CSVS.map((key) => ({
    name: names[key],
    rows: parts.reduce((sum, part) => sum + part.counts[key], 0),
    columns: headers,
  }));
}

/** Closes (flushes, fsyncs) every file, then throws the first failure: no descriptor left open. */
function closeAll(files: readonly TextFile[]): void {
  let failure: { error: unknown } | null = null;
  for (const file of files) {
    try {
      file.close();
    } catch (error) {
      failure ??= { error };
    }
  }
  if (failure) throw failure.error;
}

/** Every project's ticket keys, when a ticket-reference control is configured (record ids are unique). */
function ticketsOf(parts: readonly ReportPart[], args: ReportArgs): Map<string, string> | null {
  if (!args.controls?.some((c) => c.kind === "ticket-reference")) return null;
  const all = new Map<string, string>();
  for (const part of parts) for (const [id, ticket] of part.controls?.tickets ?? []) all.set(id, ticket);
  return all;
}

/** findings_<period>.csv: every finding of the controls over the period, with its waiver. */
export async function writeFindingsCsv(
  parts: readonly ReportPart[],
  staging: string,
  args: ReportArgs,
): Promise<WrittenFile> {
  const name = reportFileNames(args.period).findings;
  const columns = findingColumns(isoFormatter(args.period.timeZone));
  const options = { bom: args.bom };
  async function* one(rows: ReportFinding[]) {
    if (rows.length > 0) yield rows;
  }
  let headers: string[];
  if (parts.length === 1) {
    await writeCsv(join(staging, name), columns, one(parts[0]!.controls?.findings ?? []), options);
    headers = columns.map((c) => c.header);
  } else {
    const combined = projectColumns(columns);
    const rows = projectBatches(parts, (part) => one(part.controls?.findings ?? []));
    await writeCsv(join(staging, name), combined, rows, options);
    headers = combined.map((c) => c.header);
  }
  const rows = parts.reduce((sum, part) => sum + (part.controls?.findings.length ?? 0), 0);
  return { name, rows, columns: headers };
}

/**
 * A CSV row as a row of its summary query (experimentSummary, configSummary, unreviewedSummary): one change
 * of its entity, person and type, with its rule changes (only the config edits' CSV query counts them).
 */
function summaryEntry(row: CsvRow, ruleChanges = row.rule_changes ?? 0): EntitySummaryRow {
  return {
    name: row.name,
    updated_by: row.updated_by,
    action_type: row.action_type,
    changes: 1,
    rule_changes: ruleChanges,
    first_at: row.occurred_at,
    last_at: row.occurred_at,
  };
}
