// SQLite's drizzle tables, built from the store's one description (tables.ts): drizzle-kit's source.
import {
  blob,
  index,
  integer,
  primaryKey,
  type SQLiteColumn,
  type SQLiteTableWithColumns,
  sqliteTable,
  text,
  uniqueIndex,
} from "drizzle-orm/sqlite-core";
import { buildTables } from "./tableKinds.ts";
import { type ColumnKeys, TABLES } from "./tables.ts";

type Table<K extends string> = SQLiteTableWithColumns<{
  name: string;
  schema: undefined;
  columns: Record<K, SQLiteColumn>;
  dialect: "sqlite";
}>;

const tables = buildTables(TABLES, {
  engine: "sqlite",
  columns: {
    serial: (name) => integer(name).primaryKey({ autoIncrement: true }),
    text,
    blob,
    integer,
    epochMs: integer,
    bigNumber: integer,
  },
  table: sqliteTable,
  index,
  uniqueIndex,
  primaryKey,
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
