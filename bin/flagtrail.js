#!/usr/bin/env node
// Runs the compiled CLI in dist/ (built from src/ by `npm ci` through the `prepare` script, and packed
// into the tarball). FLAGTRAIL_FROM_SOURCE=1 runs the TypeScript sources through tsx instead: the tests
// do, so a test run never depends on a fresh build.
import { existsSync } from "node:fs";

// SIGINT/SIGTERM while the CLI loads (tsx, commander, the commands' help: the first ~0.2 s) would end
// the process with node's default, 130/143 and no sentence. Held here and handed to the CLI, which
// decides what a signal means (src/cli.ts, runProcess).
const early = [];
const hold = (signal) => early.push(signal);
process.on("SIGINT", hold);
process.on("SIGTERM", hold);

let cli;
if (process.env.FLAGTRAIL_FROM_SOURCE === "1") {
  const { register } = await import("tsx/esm/api");
  register();
  cli = await import("../src/cli.ts");
} else {
  const compiled = new URL("../dist/cli.js", import.meta.url);
  if (!existsSync(compiled)) {
    process.stderr.write(
      "flagtrail: dist/ is missing; run `npm run build` (or `npm ci`) in the project first.\n",
    );
    process.exit(1);
  }
  cli = await import(compiled.href);
}
process.off("SIGINT", hold);
process.off("SIGTERM", hold);
process.exitCode = await cli.runProcess(process.argv, early[0]);
