// `npm run test:campaign`: the campaign files alone at full scale, one file at a time (kill moments
// and request counts are not shared with other CLI processes), then one table of figures.
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/campaign/**/*.test.ts"],
    env: { CAMPAIGN_SCALE: "full" },
    testTimeout: 900_000,
    hookTimeout: 900_000,
    pool: "forks",
    fileParallelism: false,
    // The run's own temporary directory (test/tmpRoot.ts), torn down after the summary.
    globalSetup: ["test/tmpRoot.ts", "test/campaign/summary.ts"],
  },
});
