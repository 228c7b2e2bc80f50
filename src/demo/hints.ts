// How the demo's closing hints name flagtrail, so that they work where the user is. `npx flagtrail`
// works only where flagtrail is installed as a dependency (node_modules/.bin); anywhere else, its own
// checkout included, npx asks the registry (E404). `npm run demo` works only in the checkout. So the
// hints name `node bin/flagtrail.js` in the checkout, and elsewhere the command that is running.
import { accessSync, constants, existsSync, readFileSync, realpathSync } from "node:fs";
import { delimiter, join, resolve } from "node:path";

export interface Invocation {
  cwd: string;
  /** process.argv[1]: the script node runs (bin/flagtrail.js, or a symlink to it). */
  script: string;
  /** $PATH. */
  path: string;
}

export interface DemoCommands {
  /** What runs flagtrail here: `node bin/flagtrail.js`, `flagtrail`, `npx flagtrail` or the script's path. */
  flagtrail: string;
  /** What runs the demo again with its default options. */
  demo: string;
}

export function currentInvocation(): Invocation {
  return { cwd: process.cwd(), script: process.argv[1] ?? "", path: process.env.PATH ?? "" };
}

function realpathOrUndefined(path: string): string | undefined {
  try {
    return realpathSync(path);
  } catch {
    return undefined;
  }
}

/** The project's own checkout: a package.json of flagtrail in the working directory. */
function inCheckout(cwd: string): boolean {
  const file = join(cwd, "package.json");
  if (!existsSync(file)) return false;
  try {
    return (JSON.parse(readFileSync(file, "utf8")) as { name?: unknown }).name === "flagtrail";
  } catch {
    return false;
  }
}

/** `flagtrail` on $PATH runs this very script (a global install, `npm link`). */
function onPath(invocation: Invocation, script: string): boolean {
  return invocation.path
    .split(delimiter)
    .filter(Boolean)
    .some((dir) => realpathOrUndefined(join(dir, "flagtrail")) === script);
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

export function demoCommands(invocation: Invocation, quote: (word: string) => string): DemoCommands {
  if (inCheckout(invocation.cwd)) return { flagtrail: "node bin/flagtrail.js", demo: "npm run demo" };
  const script = realpathOrUndefined(invocation.script) ?? resolve(invocation.cwd, invocation.script);
  const local = realpathOrUndefined(join(invocation.cwd, "node_modules", ".bin", "flagtrail"));
  let flagtrail: string;
  // Installed in this directory first: npx (and npm scripts) put node_modules/.bin on the PATH the demo
  // sees, not on the user's shell's, so `flagtrail` would be found here and not there.
  if (local === script) flagtrail = "npx flagtrail";
  else if (onPath(invocation, script)) flagtrail = "flagtrail";
  else if (isExecutable(script)) flagtrail = quote(script);
  else flagtrail = `node ${quote(script)}`;
  return { flagtrail, demo: `${flagtrail} demo` };
}
