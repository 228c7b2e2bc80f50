// Module hooks of recordLoads.mjs (they run on node's loader thread).
import { appendFileSync } from "node:fs";
import { sourceUrl } from "./sourceUrl.mjs";

let log;

export function initialize(data) {
  log = data.log;
}

export async function load(url, context, nextLoad) {
  if (log) appendFileSync(log, `${sourceUrl(url)}\n`);
  return nextLoad(url, context);
}
