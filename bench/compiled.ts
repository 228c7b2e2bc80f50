// Running the CLI as users run it: the compiled dist/, rebuilt from the current sources first so that a
// figure is never that of a stale build.
import { execFileSync } from "node:child_process";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

export const ROOT = fileURLToPath(new URL("..", import.meta.url));

/** `--import` this: the process prints its peak RSS (KB) on stderr at exit, as `MAXRSS n`. */
export const PRINT_MAX_RSS =
  "data:text/javascript,process.on('exit',()=>process.stderr.write('MAXRSS '+process.resourceUsage().maxRSS+'\\n'))";

export function buildDist(): void {
  const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
  execFileSync(process.execPath, [tsc, "-p", "tsconfig.build.json"], { cwd: ROOT, stdio: "inherit" });
}

/** Without FLAGTRAIL_FROM_SOURCE, whatever the caller's shell has: the bin must run dist/. */
export function compiledEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env = { ...process.env, ...extra };
  delete env.FLAGTRAIL_FROM_SOURCE;
  return env;
}

/** The peak RSS in MB a PRINT_MAX_RSS process printed. */
export function maxRssMb(stderr: string): number {
  const match = /MAXRSS (\d+)/.exec(stderr);
  if (!match?.[1]) throw new Error(`no MAXRSS line in: ${stderr.slice(-500)}`);
  return Number(match[1]) / 1024;
}
