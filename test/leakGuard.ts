// Runs before every test file (setupFiles). Test files share their worker process with the files run
// before and after them (`isolate: false` in vitest.config.ts: each file's imports are loaded once per
// worker, not once per file). A file that leaves the process changed (an environment variable, the
// zone, process.env itself, the working directory, the umask, pg's global bigint parser) fails here,
// naming what it left, instead of making a later file pass or fail by the worker it happened to run in.
import pg from "pg";
import { afterAll } from "vitest";

const envObject = process.env;
const env = { ...process.env };
const int8 = pg.types.getTypeParser(pg.types.builtins.INT8);
const cwd = process.cwd();
const umask = currentUmask();

/** process.umask() without an argument is deprecated: set it and put it back. */
function currentUmask(): number {
  const mask = process.umask(0o022);
  process.umask(mask);
  return mask;
}

afterAll(() => {
  const changed = [...new Set([...Object.keys(env), ...Object.keys(process.env)])].filter(
    (key) => env[key] !== process.env[key],
  );
  const left = [
    ...changed.map((key) => `environment variable ${key}`),
    ...(process.env === envObject ? [] : ["process.env (replaced by another object)"]),
    ...(pg.types.getTypeParser(pg.types.builtins.INT8) === int8 ? [] : ["pg's type parser for bigint"]),
    ...(process.cwd() === cwd ? [] : ["the working directory"]),
    ...(currentUmask() === umask ? [] : ["the umask"]),
  ];
  if (left.length > 0) {
    throw new Error(
      `This test file changed the worker's process and did not put it back: ${left.join(", ")}.`,
    );
  }
});
