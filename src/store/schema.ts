// SQLite's drizzle tables, built from the one description of the store's tables (src/store/tables.ts):
// the source of drizzle-kit's migrations in drizzle/.
import {
  blob,
  type IndexBuilder,
  index,
  integer,
  primaryKey,
  type SQLiteColumn,
  type SQLiteColumnBuilderBase,
  type SQLiteTableWithColumns,
  sqliteTable,
  text,
  uniqueIndex,
} from "drizzle-orm/sqlite-core";
import { buildTables, type ColumnKeys } from "./tables.ts";

type Table<K extends string> = SQLiteTableWithColumns<{
  name: string;
  schema: undefined;
  columns: Record<K, SQLiteColumn>;
  dialect: "sqlite";
}>;
type Columns = [SQLiteColumn, ...SQLiteColumn[]];

const tables = buildTables({
  engine: "sqlite",
  column: (kind, name) =>
    kind === "serial"
      ? integer(name).primaryKey({ autoIncrement: true })
      : kind === "text"
        ? text(name)
        : kind === "blob"
          ? blob(name)
          : integer(name),
  generated: (c, expression) =>
    (c as ReturnType<typeof text>).generatedAlwaysAs(expression, { mode: "virtual" }),
  table: (name, columns, extras) =>
    sqliteTable(name, columns as Record<string, SQLiteColumnBuilderBase>, (t) => extras(t) as IndexBuilder[]),
  index: (name, unique, columns) => (unique ? uniqueIndex : index)(name).on(...(columns as Columns)),
  primaryKey: (columns) => primaryKey({ columns: columns as Columns }),
}) as { [T in keyof ColumnKeys]: Table<ColumnKeys[T]> };

// One export per table: drizzle-kit reads the tables from this module's exports.
export const {
  auditLogs,
  auditLogRevisions,
  quarantine,
  syncRuns,
  checkpoints,
  syncWindows,
  coverage,
  leases,
  ruleChanges,
  ruleDiffSummaries,
  listedDays,
  actionTypeCategories,
  meta,
  configVersions,
  configVersionRevisions,
  experimentSnapshots,
  metricSnapshots,
  entityFetches,
  entityBacklog,
  configEditLinks,
  configVersionChanges,
  controlFindings,
  controlTickets,
  controlChecks,
  controlWaivers,
  controlOutbox,
  exportCursors,
} = tables;
