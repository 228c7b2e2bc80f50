import { createHash } from "node:crypto";
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { FlagtrailError, LockedError } from "../../src/errors.ts";
import { sqliteOf } from "../../src/store/connection.ts";
import { acquireLease } from "../../src/store/leases.ts";
import { NEW_STORE_PAGE_SIZE, openStore } from "../../src/store/open.ts";
import { runCli } from "../helpers/runCli.ts";

describe("openStore", () => {
  it("applies the drizzle migrations to an in-memory database", () => {
    const store = openStore(":memory:");
    const tables = sqliteOf(store)
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
      .pluck()
      .all();
    expect(tables).toEqual(
      expect.arrayContaining([
        "audit_logs",
        "audit_log_revisions",
        "quarantine",
        "sync_runs",
        "checkpoints",
        "coverage",
      ]),
    );
    store.close();
  });

  it("creates the file private, in WAL mode, with foreign keys on", () => {
    const path = join(mkdtempSync(join(tmpdir(), "flagtrail-")), "t.db");
    const store = openStore(path);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(sqliteOf(store).pragma("journal_mode", { simple: true })).toBe("wal");
    expect(sqliteOf(store).pragma("foreign_keys", { simple: true })).toBe(1);
    store.close();
  });

  it("narrows a pre-existing 0644 store, and its -wal and -shm, to 0600 on a writable open", () => {
    const path = join(mkdtempSync(join(tmpdir(), "flagtrail-")), "t.db");
    // A first connection left open keeps the -wal and -shm files on disk.
    const first = openStore(path);
    const files = [path, `${path}-wal`, `${path}-shm`];
    expect(files.map(existsSync)).toEqual([true, true, true]);
    for (const file of files) chmodSync(file, 0o644);

    // A read-only open (status, sql, verify) changes nothing.
    openStore(path, { readonly: true }).close();
    expect(files.map((f) => statSync(f).mode & 0o777)).toEqual([0o644, 0o644, 0o644]);

    const second = openStore(path);
    expect(files.map((f) => statSync(f).mode & 0o777)).toEqual([0o600, 0o600, 0o600]);
    second.close();
    first.close();
  });

  it.runIf(process.getuid?.() === 0)("leaves a store it does not own as it is", () => {
    const path = join(mkdtempSync(join(tmpdir(), "flagtrail-")), "t.db");
    openStore(path).close();
    chmodSync(path, 0o644);
    chownSync(path, 4242, 4242);
    openStore(path).close();
    expect(statSync(path).mode & 0o777).toBe(0o644);
  });

  it("turns open failures into one FlagtrailError sentence naming the path and the cause", () => {
    const missingDir = join(mkdtempSync(join(tmpdir(), "flagtrail-")), "no", "such", "x.db");
    expect(() => openStore(missingDir)).toThrow(FlagtrailError);
    expect(() => openStore(missingDir)).toThrow(`Cannot open the database at ${missingDir}: ENOENT`);

    const notDb = join(mkdtempSync(join(tmpdir(), "flagtrail-")), "notes.db");
    writeFileSync(notDb, "these are not the pages you are looking for\n".repeat(200));
    for (const readonly of [false, true]) {
      let caught: unknown;
      try {
        openStore(notDb, { readonly });
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(FlagtrailError);
      expect((caught as Error).message).toMatch(
        /^Cannot open the database at .*notes\.db: SQLITE_NOTADB: file is not a database\.$/,
      );
    }
  });

  it("maps SQLITE_BUSY while taking a lease to LockedError", async () => {
    const path = join(mkdtempSync(join(tmpdir(), "flagtrail-")), "busy.db");
    const holder = openStore(path);
    const other = openStore(path);
    sqliteOf(other).pragma("busy_timeout = 20");
    sqliteOf(holder).prepare("BEGIN IMMEDIATE").run();
    try {
      await expect(acquireLease(other, "sync", "h/1/sync", 60_000)).rejects.toThrow(LockedError);
      await expect(acquireLease(other, "sync", "h/1/sync", 60_000)).rejects.toThrow(/database is busy/);
    } finally {
      sqliteOf(holder).prepare("ROLLBACK").run();
      holder.close();
      other.close();
    }
  });

  // Root writes any directory: this runs for other users only (checked by hand as one: same sentence).
  it.skipIf(process.getuid?.() === 0)(
    "says in one sentence why a WAL store in a read-only directory cannot be read, and what to do",
    () => {
      const dir = mkdtempSync(join(tmpdir(), "flagtrail-rodir-"));
      const path = join(dir, "copy.db");
      openStore(path).close();
      chmodSync(dir, 0o555);
      try {
        expect(() => openStore(path, { readonly: true })).toThrow(
          /^Cannot open \S+copy\.db: SQLite must create copy\.db-shm beside a WAL-mode store even to read it, and its directory is not writable; copy it to a writable directory/,
        );
      } finally {
        chmodSync(dir, 0o755);
      }
    },
  );

  it("refuses to read a store an older flagtrail wrote, or one that is not a flagtrail store, in one sentence", () => {
    const dir = mkdtempSync(join(tmpdir(), "flagtrail-"));
    const old = join(dir, "old.db");
    const store = openStore(old);
    // An older flagtrail had applied fewer migrations than this one ships.
    sqliteOf(store)
      .prepare(
        "DELETE FROM __drizzle_migrations WHERE created_at = (SELECT max(created_at) FROM __drizzle_migrations)",
      )
      .run();
    store.close();
    expect(() => openStore(old, { readonly: true })).toThrow(
      /old\.db was written by an older flagtrail; run `flagtrail sync` on it once to upgrade it\.$/,
    );
    openStore(join(dir, "current.db")).close();
    openStore(join(dir, "current.db"), { readonly: true }).close();

    const foreign = join(dir, "other.db");
    const plain = new Database(foreign);
    plain.exec("CREATE TABLE t (x)");
    plain.close();
    expect(() => openStore(foreign, { readonly: true })).toThrow(
      /other\.db is another application.s SQLite database \(tables t\), not a flagtrail store/,
    );
  });
});

describe("another application's SQLite file (issue 9)", () => {
  it("sync and report refuse it in one sentence, exit 1, leaving it byte-identical and not in WAL", async () => {
    const dir = mkdtempSync(join(tmpdir(), "flagtrail-foreign-"));
    const path = join(dir, "app.db");
    const app = new Database(path);
    app.exec(
      "CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO users (name) VALUES ('Zoë');",
    );
    app.exec("CREATE TABLE orders (id INTEGER PRIMARY KEY, user_id INTEGER)");
    app.close();
    chmodSync(path, 0o644);
    const before = createHash("sha256").update(readFileSync(path)).digest("hex");

    const [sync, report] = await Promise.all([
      runCli(["sync", "--db", path, "--base-url", "http://127.0.0.1:9", "--api-key", "k"]),
      runCli([
        "report",
        "--db",
        path,
        "--from",
        "2024-01-01",
        "--to",
        "2024-01-02",
        "--out",
        join(dir, "out"),
      ]),
    ]);
    for (const result of [sync, report]) {
      expect(result.code).toBe(1);
      expect(result.stderr).toBe(
        `flagtrail: ${path} is another application's SQLite database (tables orders, users), not a flagtrail store; it was left untouched.\n`,
      );
    }
    expect(createHash("sha256").update(readFileSync(path)).digest("hex")).toBe(before);
    expect(statSync(path).mode & 0o777).toBe(0o644);
    expect(readdirSync(dir).sort()).toEqual(["app.db"]);
  });

  it("still opens an empty file as a new store", () => {
    const path = join(mkdtempSync(join(tmpdir(), "flagtrail-")), "empty.db");
    writeFileSync(path, "");
    openStore(path).close();
    openStore(path).close();
    expect(openStore(path, { readonly: true }).readonly).toBe(true);
  });
});

describe("page size (issue 25: bytes per record)", () => {
  const pageSize = (path: string) => {
    const db = new Database(path, { readonly: true });
    try {
      return db.pragma("page_size", { simple: true });
    } finally {
      db.close();
    }
  };

  it("creates a new store, or fills an empty file, with 16 KB pages", () => {
    const dir = mkdtempSync(join(tmpdir(), "flagtrail-pagesize-"));
    openStore(join(dir, "new.db")).close();
    expect(pageSize(join(dir, "new.db"))).toBe(NEW_STORE_PAGE_SIZE);
    expect(NEW_STORE_PAGE_SIZE).toBe(16_384);
    writeFileSync(join(dir, "empty.db"), "");
    openStore(join(dir, "empty.db")).close();
    expect(pageSize(join(dir, "empty.db"))).toBe(16_384);
  });

  it("leaves the pages of an existing store as they are", () => {
    const dir = mkdtempSync(join(tmpdir(), "flagtrail-pagesize-"));
    const path = join(dir, "old.db");
    // A store as an earlier flagtrail made it: SQLite's default 4 KB pages.
    openStore(path).close();
    const old = new Database(path);
    old.pragma("journal_mode = DELETE");
    old.pragma("page_size = 4096");
    old.exec("VACUUM");
    old.close();
    expect(pageSize(path)).toBe(4096);
    const store = openStore(path);
    expect(sqliteOf(store).prepare("SELECT count(*) FROM audit_logs").pluck().get()).toBe(0);
    store.close();
    expect(pageSize(path)).toBe(4096);
  });
});
