// Child process of publish.test.ts: writes the scenario report from a store file and kills itself
// (SIGKILL, as `kill -9` would) right before the given publishing step.
import { writeReports } from "../../src/report/writeReports.ts";
import { GENERATED_AT, SCENARIO } from "./scenario.ts";

const [dbPath, outDir, killAt] = process.argv.slice(2);
await writeReports({
  dbPath: dbPath!,
  ...SCENARIO,
  outDir: outDir!,
  generatedAt: GENERATED_AT,
  signingKey: "publish-test-key",
  force: true,
  publishHook: (step) => {
    if (step === killAt) process.kill(process.pid, "SIGKILL");
  },
});
