// The source file a module of the run's compiled copy (test/helpers/compiledCli.ts) was transpiled from:
// the copy is made file for file, dist/x/y.js from src/x/y.ts, so module hooks that watch which sources
// load (recordLoadsHooks.mjs, signalOnLoadHooks.mjs) see the same names whichever a spawned CLI runs.
const COMPILED = /\/compiled-cli\/dist\/(.+)\.js$/;
const SOURCES = new URL("../../src/", import.meta.url);

/** `url` itself unless it is a module of the compiled copy. */
export function sourceUrl(url) {
  const match = COMPILED.exec(url);
  return match ? new URL(`${match[1]}.ts`, SOURCES).href : url;
}
