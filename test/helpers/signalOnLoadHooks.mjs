// Module hooks of signalOnLoad.mjs (they run on node's loader thread; the signal goes to the process).
import { sourceUrl } from "./sourceUrl.mjs";

let pattern = /(?!)/;
let sent = false;

export function initialize(data) {
  pattern = new RegExp(data.pattern);
}

export async function load(url, context, nextLoad) {
  if (!sent && pattern.test(sourceUrl(url))) {
    sent = true;
    process.kill(process.pid, "SIGTERM");
  }
  return nextLoad(url, context);
}
