import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // The run's own temporary directory first (torn down last), then, made side by side by
    // test/globalSetup.ts, the CLI compiled from the sources for the spawned CLIs
    // (test/helpers/compiledCli.ts) and one throwaway PostgreSQL cluster for the whole run (tests reach
    // it with inject("pgUrl")).
    globalSetup: ["test/tmpRoot.ts", "test/globalSetup.ts"],
    // Generous: tests wait on conditions, and a loaded machine must make a run slower, not red.
    testTimeout: 240_000,
    hookTimeout: 240_000,
    // Integration tests spawn the CLI and a simulator; two cores cannot run many at once.
    pool: "forks",
    maxWorkers: 2,
    // A worker runs file after file in one process: the modules they import (zod, drizzle, the
    // simulator, the store) load once per worker instead of once per file, which took a third of the
    // workers' time. test/leakGuard.ts fails a file that leaves the process changed for the next one.
    isolate: false,
    setupFiles: ["test/leakGuard.ts"],
    // A bin/flagtrail.js spawned from the project runs the TypeScript sources, never a possibly stale
    // dist/ (test/helpers/runCli.ts spawns the run's own compiled copy instead).
    env: { FLAGTRAIL_FROM_SOURCE: "1" },
  },
});
