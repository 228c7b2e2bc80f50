// Module hooks of signalOnLoad.mjs (they run on node's loader thread; the signal goes to the process).
import { sourceUrl } from "./sourceUrl.mjs";

let pattern = /(?!)/;
let signal = "SIGTERM";
let sent = false;

export function initialize(data) {
  pattern = new RegExp(data.pattern);
  signal = data.signal;
}

export async function load(url, context, nextLoad) {
  if (!sent && pattern.test(sourceUrl(url))) {
    sent = true;
    process.kill(process.pid, signal);
  }
  return nextLoad(url, context);
}
