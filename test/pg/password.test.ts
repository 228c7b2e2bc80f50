// Keeping the PostgreSQL password off the command line (`ps` shows --db): a URL without a password plus
// PGPASSWORD logs in, as libpq would; `--db-file` reads the URL from a file. And `?sslmode=require`
// means what it means to libpq, without node-postgres' nine-line warning.
import { chmodSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runCliInProcess } from "../helpers/inProcessCli.ts";
import { runCli } from "../helpers/runCli.ts";
import { daysAgo, simEnv, useTestSimulator } from "../helpers/simSync.ts";
import { freshDatabase, queryOnce } from "./cluster.ts";

const startSim = useTestSimulator();

function withoutPassword(url: string): string {
  const bare = new URL(url);
  bare.password = "";
  return bare.toString();
}

describe("the PostgreSQL password off the command line", () => {
  it("a URL without a password logs in with PGPASSWORD; without it the login is refused", async () => {
    const sim = await startSim({ records: 30, days: 5 });
    const url = await freshDatabase("pgpassword");
    const password = new URL(url).password;
    expect(password).not.toBe("");
    const bare = withoutPassword(url);
    const args = ["sync", "--no-entities", "--quiet", "--since", daysAgo(6), "--db", bare];
    const refused = await runCli(args, {
      env: { ...simEnv(sim, bare), PGPASSWORD: undefined },
      timeoutMs: 20_000,
    });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/refused the login|password/);
    // In this process (the refused sync above is spawned).
    const synced = await runCliInProcess(args, { env: { ...simEnv(sim, bare), PGPASSWORD: password } });
    expect(synced.code, synced.stderr).toBe(0);
    expect(synced.stderr).toBe("");
    const [row] = await queryOnce<{ n: string }>(url, "SELECT count(*) AS n FROM audit_logs");
    expect(Number(row?.n)).toBe(30);

    // A password file (libpq's format, 0600) works too; node-postgres 8 prints a deprecation warning.
    const { hostname, port, pathname } = new URL(url);
    const passfile = join(mkdtempSync(join(tmpdir(), "flagtrail-pgpass-")), "pgpass");
    writeFileSync(passfile, `${hostname}:${port}:${pathname.slice(1)}:postgres:${password}\n`);
    chmodSync(passfile, 0o600);
    const status = await runCli(["status", "--db", bare], {
      env: { PGPASSWORD: undefined, PGPASSFILE: passfile },
    });
    expect(status.code, status.stderr).toBe(0);
    expect(status.stderr).not.toContain(password);
  });

  it("sslmode=require is libpq's require: one sentence, no SECURITY WARNING", async () => {
    const url = new URL(await freshDatabase("sslmode"));
    url.searchParams.set("sslmode", "require");
    // The test server has no TLS: libpq's require then fails to connect, in one sentence.
    const result = await runCli(["status", "--db", url.toString()]);
    expect(result.code).toBe(1);
    expect(result.stderr).not.toMatch(/SECURITY WARNING|Warning/);
    expect(result.stderr.trim().split("\n"), result.stderr).toHaveLength(1);
    expect(result.stderr).toMatch(/SSL/);
    expect(result.stderr).not.toContain(url.password);
  });
});
