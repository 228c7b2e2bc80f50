// One build of the CLI per test run, for the CLIs the tests spawn. Each spawn of bin/flagtrail.js from
// the TypeScript sources (tsx) paid 1.5–2 s of start-up on a loaded 2-core machine against 0.5 s for
// compiled JavaScript, over hundreds of spawns. The build is fresh (made from src/ when the run starts,
// so never a stale dist/), in the run's temporary directory, and laid out as the package is: bin/, dist/,
// package.json and drizzle/ side by side, so the relative paths the code reads (migrations, the version)
// resolve as they do in an install. Each file is transpiled alone, by the compiler `npm run build` uses
// and with its options (type errors are `npm run typecheck`'s business): the output is byte for byte
// what the build writes. FLAGTRAIL_TEST_FROM_SOURCE=1 skips it: every spawned CLI runs the sources.
// Transpiling is the slow part (7 s of one core for the 270 files, twice that on a loaded machine) and
// each file is independent: worker threads (test/helpers/transpileWorker.mjs), one per core, share it,
// biggest files first so that the last ones taken are short. test/globalSetup.ts runs this build while
// PostgreSQL starts.
import { copyFileSync, mkdirSync, readdirSync, statSync, symlinkSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import type { TestProject } from "vitest/node";

declare module "vitest" {
  export interface ProvidedContext {
    /** bin/flagtrail.js of this run's compiled copy; absent when the spawned CLIs run the sources. */
    compiledCli: string | undefined;
  }
}

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const WORKER = new URL("transpileWorker.mjs", import.meta.url);
/** More workers than this spend more loading the compiler (1 s each) than they save. */
const MAX_WORKERS = 4;

/** The sources to transpile (paths under src/), biggest first. */
function sources(): string[] {
  const src = join(ROOT, "src");
  // A declaration file (src/store/pg/pgCopyStreams.d.ts) has no JavaScript to emit.
  const files = readdirSync(src, { recursive: true, encoding: "utf8" }).filter(
    (file) => file.endsWith(".ts") && !file.endsWith(".d.ts"),
  );
  const size = new Map(files.map((file) => [file, statSync(join(src, file)).size]));
  return files.sort((a, b) => (size.get(b) ?? 0) - (size.get(a) ?? 0));
}

function transpileWorker(workerData: {
  root: string;
  into: string;
  files: string[];
  next: SharedArrayBuffer;
}) {
  return new Promise<void>((resolve, reject) => {
    const worker = new Worker(WORKER, { workerData });
    worker.once("error", reject);
    worker.once("exit", (code) =>
      code === 0 ? resolve() : reject(new Error(`A transpiling worker exited with code ${code}`)),
    );
  });
}

/** Writes the compiled copy under `into`; returns its bin/flagtrail.js. */
async function build(into: string): Promise<string> {
  const files = sources();
  const next = new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT);
  const workers = Math.min(MAX_WORKERS, availableParallelism(), files.length);
  await Promise.all(
    Array.from({ length: workers }, () => transpileWorker({ root: ROOT, into, files, next })),
  );
  mkdirSync(join(into, "bin"));
  copyFileSync(join(ROOT, "bin", "flagtrail.js"), join(into, "bin", "flagtrail.js"));
  copyFileSync(join(ROOT, "package.json"), join(into, "package.json"));
  symlinkSync(join(ROOT, "drizzle"), join(into, "drizzle"));
  symlinkSync(join(ROOT, "node_modules"), join(into, "node_modules"));
  return join(into, "bin", "flagtrail.js");
}

export default async function setup(project: TestProject): Promise<void> {
  const fromSource = process.env.FLAGTRAIL_TEST_FROM_SOURCE === "1";
  // After test/tmpRoot.ts: tmpdir() is the run's own directory, removed when the run ends.
  project.provide("compiledCli", fromSource ? undefined : await build(join(tmpdir(), "compiled-cli")));
}
