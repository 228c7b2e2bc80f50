#!/usr/bin/env node
// Runs the compiled CLI in dist/ (built from src/ by `npm ci` through the `prepare` script, and packed
// into the tarball). FLAGTRAIL_FROM_SOURCE=1 runs the TypeScript sources through tsx instead: the tests
// do, so a test run never depends on a fresh build.
import { existsSync } from "node:fs";

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
process.exitCode = await cli.runProcess(process.argv);
