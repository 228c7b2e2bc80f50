// PostgreSQL's drizzle tables, built from src/store/tables.ts: the source of drizzle-kit's migrations in
// drizzle/pg/ (the views and full-text search are in a custom migration there).
import {
  bigint,
  index,
  integer,
  type PgColumn,
  type PgTableWithColumns,
  pgTable,
  primaryKey,
  text,
  uniqueIndex,
} from "drizzle-orm/pg-core";
import { buildTables } from "../tableKinds.ts";
import { type ColumnKeys, TABLES } from "../tables.ts";

type Table<K extends string> = PgTableWithColumns<{
  name: string;
  schema: undefined;
  columns: Record<K, PgColumn>;
  dialect: "pg";
}>;

const tables = buildTables(TABLES, {
  engine: "pg",
  columns: {
    serial: (name) => integer(name).primaryKey().generatedByDefaultAsIdentity(),
    text,
    integer,
    epochMs: (name) => bigint(name, { mode: "number" }),
    bigNumber: (name) => bigint(name, { mode: "number" }),
  },
  table: pgTable,
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
