// Test preload (`node --import`): sends this process SIGTERM ($FLAGTRAIL_TEST_SIGNAL, if set) at the moment a module whose URL matches
// $FLAGTRAIL_TEST_SIGNAL_ON_LOAD starts loading. That pins a signal to a point of start-up (after the CLI
// entry ran, before the command's own code) without any timing.
import { register } from "node:module";

register("./signalOnLoadHooks.mjs", import.meta.url, {
  data: {
    pattern: process.env.FLAGTRAIL_TEST_SIGNAL_ON_LOAD ?? "(?!)",
    signal: process.env.FLAGTRAIL_TEST_SIGNAL ?? "SIGTERM",
  },
});
