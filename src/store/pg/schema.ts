// PostgreSQL's drizzle tables, built from src/store/tables.ts: the source of drizzle-kit's migrations in
// drizzle/pg/ (the views and full-text search are in a custom migration there).
import {
  bigint,
  type IndexBuilder,
  index,
  integer,
  type PgColumn,
  type PgColumnBuilderBase,
  type PgTableWithColumns,
  pgTable,
  primaryKey,
  text,
  uniqueIndex,
} from "drizzle-orm/pg-core";
import { buildTables, type ColumnKeys } from "../tables.ts";

type Table<K extends string> = PgTableWithColumns<{
  name: string;
  schema: undefined;
  columns: Record<K, PgColumn>;
  dialect: "pg";
}>;
type Columns = [PgColumn, ...PgColumn[]];

function unsupported(kind: string): never {
  throw new Error(`schema: no ${kind} columns on PostgreSQL (give the column a PostgreSQL variant)`);
}

const tables = buildTables({
  engine: "pg",
  column: (kind, name) =>
    kind === "serial"
      ? integer(name).primaryKey().generatedByDefaultAsIdentity()
      : kind === "text"
        ? text(name)
        : kind === "integer"
          ? integer(name)
          : kind === "blob"
            ? unsupported(kind)
            : bigint(name, { mode: "number" }),
  // STORED: virtual generated columns exist only from PostgreSQL 18 on.
  generated: (c, expression) => (c as ReturnType<typeof text>).generatedAlwaysAs(expression),
  table: (name, columns, extras) =>
    pgTable(name, columns as Record<string, PgColumnBuilderBase>, (t) => extras(t) as IndexBuilder[]),
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
