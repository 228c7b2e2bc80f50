// One build of the CLI per test run, for the CLIs the tests spawn. Each spawn of bin/flagtrail.js from
// the TypeScript sources (tsx) paid 1.5–2 s of start-up on a loaded 2-core machine against 0.5 s for
// compiled JavaScript, over hundreds of spawns. The build is fresh (made from src/ when the run starts,
// so never a stale dist/), in the run's temporary directory, and laid out as the package is: bin/, dist/,
// package.json and drizzle/ side by side, so the relative paths the code reads (migrations, the version)
// resolve as they do in an install. Each file is transpiled alone, by the compiler `npm run build` uses
// and with its options (type errors are `npm run typecheck`'s business): the output is byte for byte
// what the build writes. FLAGTRAIL_TEST_FROM_SOURCE=1 skips it: every spawned CLI runs the sources.
import { copyFileSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import type { TestProject } from "vitest/node";

declare module "vitest" {
  export interface ProvidedContext {
    /** bin/flagtrail.js of this run's compiled copy; absent when the spawned CLIs run the sources. */
    compiledCli: string | undefined;
  }
}

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

function compilerOptions(): ts.CompilerOptions {
  const path = join(ROOT, "tsconfig.build.json");
  const config = ts.readConfigFile(path, ts.sys.readFile);
  const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, ROOT, undefined, path);
  return parsed.options;
}

/** Writes the compiled copy under `into`; returns its bin/flagtrail.js. */
function build(into: string): string {
  const options = compilerOptions();
  const src = join(ROOT, "src");
  for (const file of readdirSync(src, { recursive: true, encoding: "utf8" })) {
    // A declaration file (src/store/pg/pgCopyStreams.d.ts) has no JavaScript to emit.
    if (!file.endsWith(".ts") || file.endsWith(".d.ts")) continue;
    const fileName = join(src, file);
    // `type: module` in package.json makes NodeNext emit ES modules; a lone file cannot see it.
    const { outputText } = ts.transpileModule(readFileSync(fileName, "utf8"), {
      compilerOptions: { ...options, module: ts.ModuleKind.ESNext },
      fileName,
    });
    const out = join(into, "dist", file.replace(/\.ts$/, ".js"));
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(out, outputText);
  }
  mkdirSync(join(into, "bin"));
  copyFileSync(join(ROOT, "bin", "flagtrail.js"), join(into, "bin", "flagtrail.js"));
  copyFileSync(join(ROOT, "package.json"), join(into, "package.json"));
  symlinkSync(join(ROOT, "drizzle"), join(into, "drizzle"));
  symlinkSync(join(ROOT, "node_modules"), join(into, "node_modules"));
  return join(into, "bin", "flagtrail.js");
}

export default function setup(project: TestProject): void {
  const fromSource = process.env.FLAGTRAIL_TEST_FROM_SOURCE === "1";
  // After test/tmpRoot.ts: tmpdir() is the run's own directory, removed when the run ends.
  project.provide("compiledCli", fromSource ? undefined : build(join(tmpdir(), "compiled-cli")));
}
