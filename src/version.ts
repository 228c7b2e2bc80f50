// The version from our own package.json. Read with a plain check, not zod: `flagtrail --version` must not
// pay for loading zod (~100 ms), and this file ships with the code rather than coming from outside.
import { createRequire } from "node:module";

const { version } = createRequire(import.meta.url)("../package.json") as { version?: unknown };
if (typeof version !== "string") throw new Error("package.json has no version");

export const VERSION: string = version;
