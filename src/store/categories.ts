// action_type_categories, kept equal to src/api/actionCategories.ts by every writable open; written only
// when it differs, so a daemon and a report opening the same store do not take the write lock for nothing.
import type Database from "better-sqlite3";
import { type SQL, sql } from "drizzle-orm";
import { ACTION_TYPE_CATEGORIES } from "../api/actionCategories.ts";
import { sqliteQueriesOn } from "./query.ts";

export type CategoryRow = { action_type: string; category: string };
export const STORED_CATEGORIES = sql`SELECT action_type, category FROM action_type_categories`;

/** The statements that make the table equal to the list (in one transaction); none when it is. */
export function categoryWrites(stored: readonly CategoryRow[]): SQL[] {
  const same =
    stored.length === ACTION_TYPE_CATEGORIES.size &&
    stored.every((row) => ACTION_TYPE_CATEGORIES.get(row.action_type) === row.category);
  if (same) return [];
  const rows = [...ACTION_TYPE_CATEGORIES].map(([type, category]) => sql`(${type}, ${category})`);
  return [
    sql`DELETE FROM action_type_categories`,
    sql`INSERT INTO action_type_categories (action_type, category) VALUES ${sql.join(rows, sql`, `)}`,
  ];
}

/** The table made equal to the list on SQLite (its open is synchronous). */
export function writeActionTypeCategories(sqlite: Database.Database): void {
  const now = sqliteQueriesOn(sqlite);
  const writes = categoryWrites(now.all<CategoryRow>(STORED_CATEGORIES));
  if (writes.length === 0) return;
  sqlite.transaction(() => {
    for (const write of writes) now.run(write);
  })();
}
