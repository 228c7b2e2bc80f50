import { readFileSync } from "node:fs";
import { createServer } from "node:net";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { ACTION_TYPE_CATEGORIES } from "../../src/api/actionCategories.ts";
import { FlagtrailError, LockedError } from "../../src/errors.ts";
import { sqliteOf } from "../../src/store/connection.ts";
import { acquireLease, readLiveLeases, releaseLease, renewLease } from "../../src/store/leases.ts";
import { writeMetaValue as writePgMetaValue } from "../../src/store/metaValues.ts";
import { openStore } from "../../src/store/open.ts";
import { openPgStore, type PgOpenOptions, type PgStore } from "../../src/store/pg/open.ts";
import { auditLogs } from "../../src/store/pg/schema.ts";
import { poolUrl } from "../../src/storeLocation.ts";
import { pgDrizzleOf } from "../helpers/storeFixtures.ts";
import { freshDatabase, queryOnce, urlFor } from "./cluster.ts";

const open: PgStore[] = [];

/** One lease as status reads it (readLiveLeases), or undefined. */
const readLiveLease = async (store: Parameters<typeof readLiveLeases>[0], name: string) =>
  (await readLiveLeases(store)).find((l) => l.lease.name === name);
async function openTracked(url: string, options: PgOpenOptions = {}): Promise<PgStore> {
  const store = await openPgStore(url, options);
  open.push(store);
  return store;
}
afterEach(async () => {
  for (const store of open.splice(0)) await store.close();
});

/** The error `promise` rejects with (the test fails when it resolves). */
async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error("expected a rejection");
}

function withPassword(url: string, password: string): string {
  const u = new URL(url);
  u.password = password;
  return u.toString();
}

const tableNames = async (url: string) =>
  (
    await queryOnce<{ name: string }>(
      url,
      "SELECT table_schema || '.' || table_name AS name FROM information_schema.tables " +
        "WHERE table_schema NOT IN ('pg_catalog', 'information_schema') ORDER BY 1",
    )
  ).map((r) => r.name);

describe("openPgStore", () => {
  it("applies the migrations once: a second open, and two at once, change nothing", async () => {
    const url = await freshDatabase("migrate");
    await Promise.all([openTracked(url), openTracked(url)]);
    const applied = await queryOnce<{ n: number }>(
      url,
      "SELECT count(*)::int AS n FROM drizzle.__drizzle_migrations",
    );
    const tables = await tableNames(url);
    for (const store of open.splice(0)) await store.close();
    await openTracked(url);
    expect(await queryOnce(url, "SELECT count(*)::int AS n FROM drizzle.__drizzle_migrations")).toEqual(
      applied,
    );
    // Every migration of drizzle/pg/, once.
    const journal = JSON.parse(readFileSync("drizzle/pg/meta/_journal.json", "utf8")) as {
      entries: unknown[];
    };
    expect(applied).toEqual([{ n: journal.entries.length }]);
    expect(await tableNames(url)).toEqual(tables);
    expect(tables).toEqual(
      expect.arrayContaining(["public.audit_logs", "public.config_edits", "public.audit_logs_fts"]),
    );
    const categories = await queryOnce<{ n: number }>(
      url,
      "SELECT count(*)::int AS n FROM action_type_categories",
    );
    expect(categories).toEqual([{ n: ACTION_TYPE_CATEGORIES.size }]);
  });

  it("says in one sentence that the server cannot be reached, without the password", async () => {
    const port = await new Promise<number>((resolve) => {
      const server = createServer().listen(0, "127.0.0.1", () => {
        const address = server.address();
        server.close(() => resolve(typeof address === "object" && address ? address.port : 0));
      });
    });
    const error = await rejection(openPgStore(`postgres://flagtrail:hunter2@127.0.0.1:${port}/ft`));
    expect(error).toBeInstanceOf(FlagtrailError);
    expect(error.message).toMatch(
      new RegExp(
        `^Cannot reach the PostgreSQL server of postgres://flagtrail:\\*\\*\\*@127\\.0\\.0\\.1:${port}/ft \\(.*ECONNREFUSED.*\\)\\.$`,
      ),
    );
    expect(error.message).not.toContain("hunter2");
  });

  it("says the login was refused on a wrong password, without the password", async () => {
    const url = withPassword(await freshDatabase("auth"), "not-the-password");
    const error = await rejection(openPgStore(url));
    expect(error).toBeInstanceOf(FlagtrailError);
    expect(error.message).toBe(
      `PostgreSQL refused the login to ${url.replace("not-the-password", "***")}: wrong user name or password.`,
    );
  });

  it("says the database does not exist, and creates nothing", async () => {
    const url = urlFor("no_such_database");
    const error = await rejection(openPgStore(url));
    expect(error.message).toMatch(
      /^The database of postgres:\/\/postgres:\*\*\*@127\.0\.0\.1:\d+\/no_such_database does not exist on that server; create it first \(CREATE DATABASE\)\.$/,
    );
    const exists = await queryOnce(
      urlFor("postgres"),
      "SELECT 1 FROM pg_database WHERE datname = 'no_such_database'",
    );
    expect(exists).toEqual([]);
  });

  it("refuses another application's database and leaves it untouched", async () => {
    const url = await freshDatabase("foreign");
    await queryOnce(url, "CREATE TABLE customers (id int PRIMARY KEY, email text)");
    const error = await rejection(openPgStore(url));
    expect(error.message).toMatch(
      / is another application's database \(tables customers\), not a flagtrail store; it was left untouched\.$/,
    );
    expect(error.message).not.toContain(new URL(url).password);
    expect(await tableNames(url)).toEqual(["public.customers"]);
  });

  it("opens read-only only a store that exists and is up to date, and the server refuses its writes", async () => {
    const url = await freshDatabase("readonly");
    expect((await rejection(openPgStore(url, { readonly: true }))).message).toMatch(
      / is not a flagtrail database \(no migrations applied\)\.$/,
    );
    expect(await tableNames(url)).toEqual([]);
    await (await openPgStore(url)).close();
    const store = await openTracked(url, { readonly: true });
    const write = await rejection(pgDrizzleOf(store).delete(auditLogs));
    expect((write as { cause?: { code?: string } }).cause?.code ?? (write as { code?: string }).code).toBe(
      "25006",
    );
  });

  it("refuses a store a newer flagtrail migrated, read-only or not, and writes nothing", async () => {
    const url = await freshDatabase("newer");
    await (await openPgStore(url)).close();
    await queryOnce(
      url,
      `INSERT INTO drizzle.__drizzle_migrations (hash, created_at) VALUES ('later', ${Date.now() + 86_400_000})`,
    );
    await queryOnce(url, "DELETE FROM action_type_categories");
    for (const options of [{}, { readonly: true }]) {
      expect((await rejection(openPgStore(url, options))).message).toMatch(
        / was written by a newer flagtrail; upgrade flagtrail to read or write it \(it was left untouched\)\.$/,
      );
    }
    // A writable open would have written the action type categories back.
    const rows = await queryOnce(url, "SELECT count(*)::int AS n FROM action_type_categories");
    expect(rows).toEqual([{ n: 0 }]);
  });
});

describe("leases on PostgreSQL", () => {
  it("refuses a second holder on another connection pool and frees the lease on close", async () => {
    const url = await freshDatabase("lease");
    const first = await openTracked(url);
    const second = await openTracked(url);
    const taken = await acquireLease(first, "sync", "host-a/1/sync", 60_000, 1_000);
    expect(taken).toEqual({
      lease: {
        name: "sync",
        holder: "host-a/1/sync",
        pid: process.pid,
        acquiredAt: 1_000,
        expiresAt: 61_000,
      },
    });
    const refused = await rejection(acquireLease(second, "sync", "host-b/2/sync", 60_000));
    expect(refused).toBeInstanceOf(LockedError);
    expect(refused.message).toBe(
      `Another sync is running on this database (process ${process.pid}, host-a, since 1970-01-01T00:00:01.000Z). Wait for it to finish.`,
    );
    expect(await readLiveLease(second, "sync")).toMatchObject({
      lease: { holder: "host-a/1/sync" },
      live: true,
    });
    expect((await renewLease(first, "sync", "host-a/1/sync", 60_000, 5_000)).expiresAt).toBe(65_000);
    // The same holder taking it again renews it, as on SQLite; another holder in the same process may not.
    expect((await acquireLease(first, "sync", "host-a/1/sync", 60_000, 6_000)).lease.acquiredAt).toBe(6_000);
    await expect(acquireLease(first, "sync", "host-a/9/other", 60_000)).rejects.toThrow(LockedError);
    // Another lease name is independent.
    await acquireLease(second, "daemon", "host-b/2/daemon", 60_000);

    open.splice(open.indexOf(first), 1);
    await first.close();
    expect(await readLiveLease(second, "sync")).toBeUndefined();
    const next = await acquireLease(second, "sync", "host-b/2/sync", 60_000);
    expect(next.tookOver).toBeUndefined();
    expect(await releaseLease(second, "sync", "host-b/2/sync")).toBe(true);
    expect(await releaseLease(second, "sync", "host-b/2/sync")).toBe(false);
  });

  it("frees the lease when its holder's session dies, and says whose lease was taken over", async () => {
    const url = await freshDatabase("lease_dead");
    const dying = await openTracked(url);
    const other = await openTracked(url);
    await acquireLease(dying, "sync", "host-a/1/sync", 60_000, 1_000);
    // What kill -9 or a lost machine does to the holder: its session ends, without a release.
    await queryOnce(
      url,
      "SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND database = " +
        "(SELECT oid FROM pg_database WHERE datname = current_database())",
    );
    await expect.poll(async () => (await readLiveLease(other, "sync"))?.live).toBe(false);
    const taken = await acquireLease(other, "sync", "host-b/2/sync", 60_000, 2_000);
    expect(taken.tookOver).toMatchObject({ holder: "host-a/1/sync", acquiredAt: 1_000 });
    await expect(renewLease(dying, "sync", "host-a/1/sync", 60_000)).rejects.toThrow(LockedError);
  });
});

describe("full-text search and generated columns on PostgreSQL", () => {
  // SQLite reads these columns from raw (virtual columns, NOT NULL).
  const REQUIRED = {
    name: "n",
    actionType: "gate_update",
    date: "Thu Oct 01 2026",
    time: "12:00:00 GMT+0000",
  };
  const raws = [
    JSON.stringify({
      id: "a1",
      ...REQUIRED,
      changes: { rules: { old: [], new: [{ id: "r1", name: "Ünïcode ✓" }] } },
    }),
    JSON.stringify({ id: "a2", ...REQUIRED, changes: null }),
    JSON.stringify({ id: "a3", ...REQUIRED }),
  ];
  const row = (raw: string, i: number) => ({
    id: `a${i + 1}`,
    name: i === 0 ? "checkout_gate" : `gate_${i}`,
    actionType: "gate_update",
    changeLog: i === 0 ? "Added the holdout rule for EU traffic" : "Renamed",
    updatedBy: i === 0 ? "Jane Roe" : "John Doe",
    dateText: "2026-10-01",
    timeText: "12:00:00",
    raw,
    recordHash: `h${i}`,
    seq: i + 1,
    chainHash: `c${i}`,
    firstSeenAt: 1_700_000_000_000,
  });

  it("finds a record by a word of its change log, through the GIN index", async () => {
    const url = await freshDatabase("fts");
    const store = await openTracked(url);
    await pgDrizzleOf(store).insert(auditLogs).values(raws.map(row));
    const search = (query: string) =>
      queryOnce<{ id: string }>(
        url,
        "SELECT a.id FROM audit_logs_fts f JOIN audit_logs a ON a.seq = f.rowid " +
          "WHERE f.document @@ websearch_to_tsquery('simple', $1) ORDER BY a.seq",
        [query],
      );
    expect(await search("holdout")).toEqual([{ id: "a1" }]);
    expect(await search("HOLDOUT eu")).toEqual([{ id: "a1" }]);
    expect(await search("jane")).toEqual([{ id: "a1" }]);
    expect(await search("doe")).toEqual([{ id: "a2" }, { id: "a3" }]);
    expect(await search("nothing-like-this")).toEqual([]);
    const byUpdater = await queryOnce<{ id: string }>(
      url,
      "SELECT a.id FROM audit_logs_fts f JOIN audit_logs a ON a.seq = f.rowid WHERE f.document @@ to_tsquery('simple', 'roe:C')",
    );
    expect(byUpdater).toEqual([{ id: "a1" }]);
    // The view's expression is the index's: with sequential scans off, the plan goes through the index.
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      await client.query("SET enable_seqscan = off");
      const plan = await client.query<{ "QUERY PLAN": string }>(
        "EXPLAIN SELECT rowid FROM audit_logs_fts WHERE document @@ websearch_to_tsquery('simple', 'holdout')",
      );
      expect(plan.rows.map((r) => r["QUERY PLAN"]).join("\n")).toContain("audit_logs_fts_idx");
    } finally {
      await client.end();
    }
  });

  it("reads `changes` from raw with the same bytes as SQLite", async () => {
    const store = await openTracked(await freshDatabase("changes"));
    await pgDrizzleOf(store).insert(auditLogs).values(raws.map(row));
    const fromPg = (
      await pgDrizzleOf(store).select({ changes: auditLogs.changes }).from(auditLogs).orderBy(auditLogs.seq)
    ).map((r) => r.changes);
    const sqlite = openStore(":memory:");
    try {
      const insert = sqliteOf(sqlite).prepare(
        "INSERT INTO audit_logs (raw_data, record_hash_bytes, seq, chain_hash_bytes, first_seen_at) VALUES (?, zeroblob(32), ?, zeroblob(32), 0)",
      );
      for (const [i, raw] of raws.entries()) insert.run(raw, i + 1);
      const fromSqlite = sqliteOf(sqlite)
        .prepare("SELECT changes FROM audit_logs ORDER BY seq")
        .pluck()
        .all();
      expect(fromPg).toEqual(fromSqlite);
      expect(fromPg).toEqual([
        JSON.stringify({ rules: { old: [], new: [{ id: "r1", name: "Ünïcode ✓" }] } }),
        "{}",
        "{}",
      ]);
    } finally {
      sqlite.close();
    }
  });
});

describe("startup settings over a URL's own options", () => {
  it("adds them after the URL's options, escaping spaces", () => {
    expect(
      poolUrl("postgres://u:p%40ss@h:5432/db?options=-c%20statement_timeout%3D5000&sslmode=disable", {
        default_transaction_read_only: "on",
        search_path: '"public_a b"',
      }),
    ).toBe(
      "postgres://u:p%40ss@h:5432/db?options=-c+statement_timeout%3D5000+-c+default_transaction_read_only%3Don+-c+search_path%3D%22public_a%5C+b%22&sslmode=disable",
    );
    expect(poolUrl("postgres://h/db", {})).toBe("postgres://h/db");
  });

  it("reads sslmode=require as libpq does, unless the URL says how, with the settings after it", () => {
    expect(poolUrl("postgres://h/db?sslmode=require", { search_path: "p" })).toBe(
      "postgres://h/db?sslmode=require&uselibpqcompat=true&options=-c+search_path%3Dp",
    );
    const told = "postgres://h/db?sslmode=require&uselibpqcompat=false";
    expect(poolUrl(told, {})).toBe(told);
    expect(poolUrl("postgres://h/db?sslmode=verify-full", {})).toBe("postgres://h/db?sslmode=verify-full");
  });

  it("a read-only open stays read-only and a project's schema holds, whatever options the URL gives", async () => {
    const url = await freshDatabase("open");
    const withOptions = `${url}?options=${encodeURIComponent("-c statement_timeout=5000")}`;
    await (await openPgStore(withOptions)).close();
    const reader = await openTracked(withOptions, { readonly: true });
    const refused = await rejection(writePgMetaValue(reader, "k", "v"));
    expect(refused.message).toMatch(/read-only transaction/);

    const project = await openTracked(withOptions, { schema: "public_eu" });
    await writePgMetaValue(project, "k", "v");
    expect(await queryOnce(url, "SELECT key, value FROM public_eu.meta WHERE key = 'k'")).toEqual([
      { key: "k", value: "v" },
    ]);
    expect(await queryOnce(url, "SELECT key FROM public.meta WHERE key = 'k'")).toEqual([]);
  });
});
