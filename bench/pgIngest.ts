// PostgreSQL ingest for the sync benchmark: `flagtrail sync --no-entities` into a throwaway embedded
// PostgreSQL (test/pg/server.ts, the tests' own server in a process of its own: it stops and deletes
// its cluster when its stdin closes), beside a bare multi-row INSERT of the very rows that sync stored
// into a fresh database of the same server. The server runs with fsync off (the test server's
// settings): both figures pay the same, so their ratio is what the figure means.
import { type ChildProcess, spawn } from "node:child_process";
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { openPgStore } from "../src/store/pg/open.ts";
import { RECORD_COLUMN_NAMES } from "../src/store/pg/writes.ts";

const SERVER = fileURLToPath(new URL("../test/pg/server.ts", import.meta.url));

export interface BenchPg {
  /** A postgres:// URL of a new, empty database on the server. */
  database(name: string): Promise<string>;
  version: string;
  stop(): Promise<void>;
}

/** Starts the server; `stop()` ends it and removes its files (so does this process ending). */
export async function startBenchPg(): Promise<BenchPg> {
  const child: ChildProcess = spawn(process.execPath, ["--import", "tsx", SERVER], {
    stdio: ["pipe", "pipe", "inherit"],
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const stop = async () => {
    child.stdin?.end();
    await exited;
  };
  try {
    const line = await new Promise<string>((resolve, reject) => {
      createInterface({ input: child.stdout! }).once("line", resolve);
      void exited.then(() => reject(new Error("bench: PostgreSQL did not start")));
    });
    const { url, version } = JSON.parse(line) as { url: string; version: string };
    return {
      version,
      stop,
      database: async (name) => {
        const admin = new pg.Client({ connectionString: url });
        await admin.connect();
        try {
          await admin.query(`DROP DATABASE IF EXISTS ${name}`);
          await admin.query(`CREATE DATABASE ${name}`);
        } finally {
          await admin.end();
        }
        const target = new URL(url);
        target.pathname = `/${name}`;
        return target.toString();
      },
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/**
 * Milliseconds to make a fresh database's schema (flagtrail's migrations, ~0.5 s on an empty database),
 * run before each timed part, the sync's too: what the figures compare is ingest into the same tables.
 */
export async function migrateMs(url: string): Promise<number> {
  const started = performance.now();
  await (await openPgStore(url)).close();
  return performance.now() - started;
}

/** The columns the sync's COPY writes: the baselines store the same ones. */
const COLUMNS = RECORD_COLUMN_NAMES;
/** Rows per INSERT: 18 columns × 1000 stays under PostgreSQL's 65,535 bind parameters. */
const ROWS_PER_INSERT = 1000;

/**
 * Milliseconds to INSERT the rows of `from`'s audit_logs into a fresh flagtrail database `to` (tables
 * made before the clock starts), 1000 rows a statement, one transaction: the floor for the sync's writes.
 */
export async function bareInsertMs(from: string, to: string): Promise<{ ms: number; rows: number }> {
  const source = new pg.Client({ connectionString: from });
  await source.connect();
  const rows = (
    await source.query({
      text: `SELECT ${COLUMNS.join(", ")} FROM audit_logs ORDER BY seq`,
      rowMode: "array",
    })
  ).rows as unknown[][];
  await source.end();
  await migrateMs(to);
  const target = new pg.Client({ connectionString: to });
  await target.connect();
  try {
    const started = performance.now();
    await target.query("BEGIN");
    for (let at = 0; at < rows.length; at += ROWS_PER_INSERT) {
      const chunk = rows.slice(at, at + ROWS_PER_INSERT);
      const values = chunk.map(
        (_, r) => `(${COLUMNS.map((_, c) => `$${r * COLUMNS.length + c + 1}`).join(", ")})`,
      );
      await target.query(
        `INSERT INTO audit_logs (${COLUMNS.join(", ")}) VALUES ${values.join(", ")}`,
        chunk.flat(),
      );
    }
    await target.query("COMMIT");
    return { ms: performance.now() - started, rows: rows.length };
  } finally {
    await target.end();
  }
}

/**
 * Milliseconds of one server-side `COPY … FROM` file of the rows of `from`'s audit_logs into a fresh
 * flagtrail database `to` (the file written by `COPY … TO` beforehand, outside the timed part): the
 * floor any client-side path (INSERT, COPY FROM STDIN) can approach.
 */
export async function copyMs(from: string, to: string): Promise<{ ms: number; rows: number }> {
  // World-writable: the server, running as another user, writes and reads the file.
  const dir = mkdtempSync(join(tmpdir(), "flagtrail-bench-copy-"));
  chmodSync(dir, 0o777);
  const file = join(dir, "audit_logs.csv");
  const columns = COLUMNS.join(", ");
  try {
    const source = new pg.Client({ connectionString: from });
    await source.connect();
    try {
      await source.query(
        `COPY (SELECT ${columns} FROM audit_logs ORDER BY seq) TO '${file}' WITH (FORMAT csv)`,
      );
    } finally {
      await source.end();
    }
    await migrateMs(to);
    const target = new pg.Client({ connectionString: to });
    await target.connect();
    try {
      const started = performance.now();
      await target.query("BEGIN");
      const copied = await target.query(`COPY audit_logs (${columns}) FROM '${file}' WITH (FORMAT csv)`);
      await target.query("COMMIT");
      return { ms: performance.now() - started, rows: copied.rowCount ?? 0 };
    } finally {
      await target.end();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
