// Opening a store: create the file private (0600), set pragmas, apply drizzle-kit migrations.
import { closeSync, existsSync, openSync, statSync } from "node:fs";
import { basename, join } from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { drizzle } from "drizzle-orm/better-sqlite3";
import { migrate } from "drizzle-orm/better-sqlite3/migrator";
import { readMigrationFiles } from "drizzle-orm/migrator";
import { asDiskFull, describeOpenError, FlagtrailError } from "../errors.ts";
import { fullFileSystem, makePrivate, noStore } from "../fs/storeFiles.ts";
import { assertMigrated, describeLocation, foreignStore, parseStoreLocation } from "../storeLocation.ts";
import { writeActionTypeCategories } from "./categories.ts";
import { attachConnection, type Store } from "./connection.ts";

/** Page size of a store created from now on (SQLite's default is 4096). */
export const NEW_STORE_PAGE_SIZE = 16_384;

export type { Store } from "./connection.ts";

const migrationsFolder = fileURLToPath(new URL("../../drizzle", import.meta.url));

export interface OpenOptions {
  /** Open without writing anything: no migrations, a read-only connection (PostgreSQL: the server's rule). */
  readonly?: boolean;
  /** Writable, but makes no store (or project): check and waive must not pass on an empty one from a typo. */
  mustExist?: boolean;
}

/** A read-only open's check on either engine: the newest migration applied against the newest shipped. */
export function assertCurrent(where: string, folder: string, applied: readonly number[]): void {
  const shipped = readMigrationFiles({ migrationsFolder: folder }).map((m) => m.folderMillis);
  assertMigrated(where, applied.length === 0 ? null : Math.max(...applied), Math.max(...shipped));
}

const appliedTimes = (sqlite: Database.Database) =>
  sqlite.prepare("SELECT created_at FROM __drizzle_migrations").pluck().all().map(Number);

/** Refuses another application's file (tables, none drizzle's), read read-only: it stays byte-identical. */
function assertNotForeign(path: string): string[] {
  const probe = new Database(path, { readonly: true, fileMustExist: true });
  try {
    const tables = probe
      .prepare(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
      )
      .pluck()
      .all() as string[];
    if (tables.length > 0 && !tables.includes("__drizzle_migrations")) {
      throw foreignStore(path, "SQLite database", tables);
    }
    return tables;
  } finally {
    probe.close();
  }
}

export function openStore(path: string, options: OpenOptions = {}): Store {
  const readonly = options.readonly ?? false;
  // A PostgreSQL URL that reached this opener must not become a file of that name.
  const location = parseStoreLocation(path);
  if (location.engine === "postgres") {
    throw new FlagtrailError(
      `${describeLocation(location)} is a PostgreSQL store, not a SQLite file; it was left untouched.`,
    );
  }
  const inMemory = path === ":memory:";
  // SQLite would open it and fail later with "disk I/O error".
  if (!inMemory && statSync(path, { throwIfNoEntry: false })?.isDirectory()) {
    throw new FlagtrailError(
      `${path} is a directory, not a database file; give a file path (such as ${join(path, "flagtrail.db")}).`,
    );
  }
  if ((readonly || options.mustExist) && !inMemory && !existsSync(path)) throw noStore(path);
  let sqlite: Database.Database | undefined;
  try {
    if (!readonly && !inMemory) {
      // Audit history names people and their emails: the file is readable by its owner only.
      if (!existsSync(path)) closeSync(openSync(path, "a", 0o600));
      else {
        if (statSync(path).size > 0) assertNotForeign(path);
        makePrivate(path);
      }
    }
    sqlite = new Database(path, { readonly, fileMustExist: !inMemory });
    sqlite.pragma("busy_timeout = 5000");
    sqlite.pragma("foreign_keys = ON");
    if (!readonly) {
      // Only a file with no page yet (WAL fixes it). ~1.2 KB records leave 14 % of 4 KB pages unused, ~6 %
      // of 16 KB (1,717 → ~1,600 bytes a record); 32/64 KB no smaller (50k: 1,327/1,367 vs 1,339 bytes).
      const newFile = !inMemory && sqlite.pragma("page_count", { simple: true }) === 0;
      if (newFile) sqlite.pragma(`page_size = ${NEW_STORE_PAGE_SIZE}`);
      if (!inMemory) sqlite.pragma("journal_mode = WAL");
      // WAL + NORMAL survives a killed process (kill -9), which is what resumable sync needs.
      sqlite.pragma("synchronous = NORMAL");
      // Checkpoint the WAL every ~40 MB rather than every 4 MB: a backfill writes hundreds of MB.
      sqlite.pragma("wal_autocheckpoint = 10000");
      // A writer's page cache: SQLite's default 2 MiB, not better-sqlite3's 16 (a 1M-record sync's peak RSS
      // 172–198 → 152–161 MB, wall 128–140 → 119–138 s). Reads that want more (a report) raise it.
      sqlite.pragma("cache_size = -2000");
      migrate(drizzle(sqlite), { migrationsFolder });
      // drizzle applies nothing to a store a newer flagtrail migrated: refused before anything is written.
      assertCurrent(path, migrationsFolder, appliedTimes(sqlite));
      writeActionTypeCategories(sqlite);
    } else {
      // Nothing above was read: a non-database fails here, not later.
      sqlite.prepare("SELECT count(*) FROM sqlite_master").pluck().get();
      if (!inMemory) {
        const migrated = assertNotForeign(path).includes("__drizzle_migrations");
        assertCurrent(path, migrationsFolder, migrated ? appliedTimes(sqlite) : []);
      }
    }
    const opened = sqlite;
    return attachConnection(
      { engine: "sqlite", path, location: path, readonly, close: () => opened.close() },
      opened,
    );
  } catch (error) {
    sqlite?.close();
    if (error instanceof FlagtrailError) throw error;
    const full = asDiskFull(error, path) ?? (inMemory ? undefined : fullFileSystem(error, path));
    if (full) throw full;
    if ((error as { code?: unknown }).code === "SQLITE_READONLY_DIRECTORY") {
      throw new FlagtrailError(
        `Cannot open ${path}: SQLite must create ${basename(path)}-shm beside a WAL-mode store even to read it, and its directory is not writable; copy it to a writable directory (docs/operations.md "Backups").`,
      );
    }
    throw new FlagtrailError(`Cannot open the database at ${path}: ${describeOpenError(error)}.`, {
      cause: error,
    });
  }
}
