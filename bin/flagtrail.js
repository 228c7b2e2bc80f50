#!/usr/bin/env node
// Runs the TypeScript sources directly through tsx, so `npx flagtrail` works right after `npm ci`
// with no build step to forget.
import { register } from "tsx/esm/api";

register();
const { main } = await import("../src/cli.ts");
process.exitCode = await main(process.argv);
