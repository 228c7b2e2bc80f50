// Test preload (`node --import`): appends the URL of every module the process loads, one a line, to the
// file $FLAGTRAIL_TEST_LOAD_LOG. Shows which modules a command pulls in (test/integration/module-loads).
import { register } from "node:module";

register("./recordLoadsHooks.mjs", import.meta.url, {
  data: { log: process.env.FLAGTRAIL_TEST_LOAD_LOG },
});
