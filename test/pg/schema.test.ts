// The store's tables are described once (src/store/tables.ts), but each engine's migrations are SQL files
// of their own (drizzle/*.sql, drizzle/pg/*.sql): this compares the databases they produce with each
// other and with the description.
import { beforeAll, describe, expect, it } from "vitest";
import { sqliteOf } from "../../src/store/connection.ts";
import { openStore } from "../../src/store/open.ts";
import { openPgStore } from "../../src/store/pg/open.ts";
import { columnName, columnsOn } from "../../src/store/tableKinds.ts";
import { TABLES } from "../../src/store/tables.ts";
import { freshDatabase, queryOnce } from "./cluster.ts";
import { SQLITE_STORAGE_COLUMNS } from "./copyStore.ts";

interface Column {
  name: string;
  nullable: boolean;
}
type Layout = Record<string, Column[]>;

const VIEWS = ["config_edits", "experiment_state_changes"];
/** SQLite-only machinery: FTS5's table and its shadow tables (PostgreSQL searches by an index and a view). */
const SQLITE_ONLY = /^audit_logs_fts/;

function sqliteLayout(): { tables: Layout; views: Layout } {
  const store = openStore(":memory:");
  try {
    const sqlite = sqliteOf(store);
    const read = (type: string) => {
      const names = sqlite
        .prepare("SELECT name FROM sqlite_master WHERE type = ? AND name NOT LIKE 'sqlite_%' ORDER BY name")
        .pluck()
        .all(type) as string[];
      const layout: Layout = {};
      for (const name of names.filter((n) => !SQLITE_ONLY.test(n) && n !== "__drizzle_migrations")) {
        const columns = sqlite
          .prepare(`SELECT name, "notnull" FROM pragma_table_xinfo(?) ORDER BY cid`)
          .all(name) as {
          name: string;
          notnull: number;
        }[];
        layout[name] = columns.map((c) => ({ name: c.name, nullable: c.notnull === 0 }));
      }
      return layout;
    };
    return { tables: read("table"), views: read("view") };
  } finally {
    store.close();
  }
}

async function postgresLayout(url: string): Promise<{ tables: Layout; views: Layout }> {
  const rows = await queryOnce<{
    table_name: string;
    table_type: string;
    column_name: string;
    is_nullable: string;
  }>(
    url,
    `SELECT c.table_name, t.table_type, c.column_name, c.is_nullable
     FROM information_schema.columns c
     JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
     WHERE c.table_schema = 'public' ORDER BY c.table_name, c.ordinal_position`,
  );
  const tables: Layout = {};
  const views: Layout = {};
  for (const row of rows) {
    const layout = row.table_type === "VIEW" ? views : tables;
    const columns = layout[row.table_name] ?? [];
    layout[row.table_name] = columns;
    columns.push({ name: row.column_name, nullable: row.is_nullable === "YES" });
  }
  return { tables, views };
}

describe("the PostgreSQL schema against the SQLite schema", () => {
  let sqlite: { tables: Layout; views: Layout };
  let postgres: { tables: Layout; views: Layout };

  beforeAll(async () => {
    const url = await freshDatabase("schema");
    const store = await openPgStore(url);
    await store.close();
    sqlite = sqliteLayout();
    postgres = await postgresLayout(url);
  });

  it("has the same tables", () => {
    expect(Object.keys(postgres.tables).sort()).toEqual(Object.keys(sqlite.tables).sort());
    expect(Object.keys(sqlite.tables)).toContain("audit_logs");
  });

  it("has the same columns in the same order, with the same nullability (but SQLite's stored record)", () => {
    for (const [table, all] of Object.entries(sqlite.tables)) {
      const columns = all.filter((c) => !SQLITE_STORAGE_COLUMNS.has(c.name));
      expect({ table, columns: postgres.tables[table] }).toEqual({ table, columns });
    }
    expect(sqlite.tables.audit_logs?.slice(-3).map((c) => c.name)).toEqual([...SQLITE_STORAGE_COLUMNS]);
  });

  it("has the tables and columns src/store/tables.ts describes, in its order, with its nullability", () => {
    const described = (engine: "sqlite" | "pg") => {
      const layout: Layout = {};
      for (const spec of Object.values(TABLES)) {
        layout[spec.name] = columnsOn(spec, engine).map(([key, column]) => ({
          name: columnName(key),
          nullable: !(column.options.notNull || column.options.primaryKey || column.kind === "serial"),
        }));
      }
      return layout;
    };
    expect(Object.keys(described("sqlite")).sort()).toEqual(Object.keys(sqlite.tables).sort());
    expect(described("sqlite")).toEqual(sqlite.tables);
    expect(described("pg")).toEqual(postgres.tables);
  });

  it("has both views with the same columns in the same order", () => {
    for (const view of VIEWS) {
      expect(sqlite.views[view]?.length).toBeGreaterThan(0);
      expect({ view, columns: postgres.views[view]?.map((c) => c.name) }).toEqual({
        view,
        columns: sqlite.views[view]?.map((c) => c.name),
      });
    }
  });
});
