// The compiled CLI (test/helpers/compiledCli.ts) and the run's PostgreSQL cluster (test/pg/globalSetup.ts)
// each take seconds to make and need nothing of each other, so they are made at the same time: vitest
// runs the setups it is given one after the other. Runs after test/tmpRoot.ts, whose directory both use.
import type { TestProject } from "vitest/node";
import buildCompiledCli from "./helpers/compiledCli.ts";
import startPostgres from "./pg/globalSetup.ts";

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const [built, started] = await Promise.allSettled([buildCompiledCli(project), startPostgres(project)]);
  if (started.status === "rejected") throw started.reason;
  if (built.status === "rejected") {
    await started.value();
    throw built.reason;
  }
  return started.value;
}
