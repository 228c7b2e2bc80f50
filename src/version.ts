import { createRequire } from "node:module";
import { z } from "zod";

const pkg = z.object({ version: z.string() }).parse(createRequire(import.meta.url)("../package.json"));

export const VERSION: string = pkg.version;
