// A fresh, empty database on the test run's PostgreSQL cluster (test/pg/globalSetup.ts), so that test
// files never see each other's tables.
import { randomUUID } from "node:crypto";
import pg from "pg";
import { inject } from "vitest";

/** The cluster's superuser URL with another database name in it. */
export function urlFor(database: string): string {
  const url = new URL(inject("pgUrl"));
  url.pathname = `/${database}`;
  return url.toString();
}

/** Creates an empty database and returns its postgres:// URL (superuser, password included). */
export async function freshDatabase(prefix = "t"): Promise<string> {
  const name = `${prefix}_${randomUUID().replaceAll("-", "")}`.toLowerCase();
  const admin = new pg.Client({ connectionString: inject("pgUrl") });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${admin.escapeIdentifier(name)}`);
  } finally {
    await admin.end();
  }
  return urlFor(name);
}

/** Runs one query on `url` over a short-lived connection (for assertions on what a store wrote). */
export async function queryOnce<R extends pg.QueryResultRow>(
  url: string,
  text: string,
  values: unknown[] = [],
): Promise<R[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<R>(text, values)).rows;
  } finally {
    await client.end();
  }
}

/**
 * Records the text of every statement any pg client of this process sends (COPY streams included) until
 * `stop()`: how the tests count a store's round trips.
 */
export function recordStatements(): { statements: string[]; stop: () => void } {
  const statements: string[] = [];
  const query = pg.Client.prototype.query;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const config = args[0] as string | { text?: string } | undefined;
    statements.push(typeof config === "string" ? config : (config?.text ?? ""));
    return (query as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof query;
  const stop = () => {
    pg.Client.prototype.query = query;
  };
  return { statements, stop };
}
