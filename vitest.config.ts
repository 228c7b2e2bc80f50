import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Integration tests spawn the CLI and a simulator; two cores cannot run many at once.
    pool: "forks",
    maxWorkers: 2,
  },
});
