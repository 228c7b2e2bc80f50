// A worker thread of test/helpers/compiledCli.ts: transpiles src/ files into the compiled copy's dist/,
// taking the next file from the list all workers share (a counter in shared memory) until none is left,
// so a worker slowed by the machine takes fewer files instead of finishing last.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { workerData } from "node:worker_threads";

/** @type {{ root: string, into: string, files: string[], next: SharedArrayBuffer }} */
const { root, into, files, next } = workerData;
// require, not import: node's import of this CommonJS package first scans its 9 MB for named exports.
const ts = createRequire(join(root, "package.json"))("typescript");

function compilerOptions() {
  const path = join(root, "tsconfig.build.json");
  const config = ts.readConfigFile(path, ts.sys.readFile);
  const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, root, undefined, path);
  // `type: module` in package.json makes NodeNext emit ES modules; a lone file cannot see it.
  return { ...parsed.options, module: ts.ModuleKind.ESNext };
}

const options = compilerOptions();
const taken = new Int32Array(next);
for (let i = Atomics.add(taken, 0, 1); i < files.length; i = Atomics.add(taken, 0, 1)) {
  const file = files[i];
  const fileName = join(root, "src", file);
  const { outputText } = ts.transpileModule(readFileSync(fileName, "utf8"), {
    compilerOptions: options,
    fileName,
  });
  const out = join(into, "dist", file.replace(/\.ts$/, ".js"));
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, outputText);
}
