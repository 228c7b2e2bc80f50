// `npm run test:campaign`: the campaign files alone at full scale, one file at a time (kill moments
// and request counts are not shared with other CLI processes), then one table of figures. The second
// campaign's defects (issue 27) run here too, through the regression tests that each fix brought: a lost
// PostgreSQL connection, `sql` refusing before the server runs anything, endless fresh ids, a removed
// digest, a signal during long SQLite work (sql, verify), a full disk.
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: [
      "test/campaign/**/*.test.ts",
      "test/pg/connectionLoss.test.ts",
      "test/pg/sqlGuard.test.ts",
      "test/sync/endlessFreshIds.test.ts",
      "test/verify/missingDigest.test.ts",
      "test/sql/interrupt.test.ts",
      "test/verify/signal.test.ts",
      "test/integration/disk.test.ts",
    ],
    testTimeout: 900_000,
    hookTimeout: 900_000,
    pool: "forks",
    fileParallelism: false,
    // The run's own temporary directory (test/tmpRoot.ts), torn down after the summary.
    // PostgreSQL for the cases that need a real server (test/pg/globalSetup.ts, as in `npm test`).
    globalSetup: ["test/tmpRoot.ts", "test/pg/globalSetup.ts", "test/campaign/summary.ts"],
    env: { CAMPAIGN_SCALE: "full", FLAGTRAIL_FROM_SOURCE: "1" },
  },
});
