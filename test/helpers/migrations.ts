// A SQLite store as an older flagtrail left it: migrated up to a given migration, for upgrade tests.
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { drizzle } from "drizzle-orm/better-sqlite3";
import { migrate } from "drizzle-orm/better-sqlite3/migrator";

const MIGRATIONS = fileURLToPath(new URL("../../drizzle", import.meta.url));

/** A store file migrated up to migration `last` (included), open: the caller closes it. */
export function storeMigratedTo(path: string, last: number): Database.Database {
  const folder = join(mkdtempSync(join(tmpdir(), `flagtrail-${last}-`)), "drizzle");
  cpSync(MIGRATIONS, folder, { recursive: true });
  const journalPath = join(folder, "meta", "_journal.json");
  const journal = JSON.parse(readFileSync(journalPath, "utf8")) as { entries: { idx: number }[] };
  journal.entries = journal.entries.filter((e) => e.idx <= last);
  writeFileSync(journalPath, JSON.stringify(journal));
  const sqlite = new Database(path);
  sqlite.pragma("foreign_keys = ON");
  migrate(drizzle(sqlite), { migrationsFolder: folder });
  return sqlite;
}
