// The action_type_categories table, kept equal to the documented list (src/api/actionCategories.ts).
import type Database from "better-sqlite3";
import { ACTION_TYPE_CATEGORIES } from "../api/actionCategories.ts";

/**
 * Makes the action_type_categories table equal to the list above. Called at every writable open;
 * it only writes when the table differs, so a daemon and a report opening the same file do not
 * take the write lock for nothing.
 */
export function writeActionTypeCategories(sqlite: Database.Database): void {
  const stored = sqlite.prepare("SELECT action_type, category FROM action_type_categories").all() as {
    action_type: string;
    category: string;
  }[];
  const same =
    stored.length === ACTION_TYPE_CATEGORIES.size &&
    stored.every((row) => ACTION_TYPE_CATEGORIES.get(row.action_type) === row.category);
  if (same) return;
  const insert = sqlite.prepare("INSERT INTO action_type_categories (action_type, category) VALUES (?, ?)");
  sqlite.transaction(() => {
    sqlite.prepare("DELETE FROM action_type_categories").run();
    for (const [type, category] of ACTION_TYPE_CATEGORIES) insert.run(type, category);
  })();
}
