import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // The run's own temporary directory first (torn down last), then one throwaway PostgreSQL cluster
    // for the whole run (tests reach it with inject("pgUrl")).
    globalSetup: ["test/tmpRoot.ts", "test/pg/globalSetup.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Integration tests spawn the CLI and a simulator; two cores cannot run many at once.
    pool: "forks",
    maxWorkers: 2,
    // Every spawned bin/flagtrail.js runs the TypeScript sources, never a possibly stale dist/.
    env: { FLAGTRAIL_FROM_SOURCE: "1" },
  },
});
