// The people (and one bot) who change things in the simulated project. Some names carry characters
// that reports must escape (`|`, a backtick, a leading `=`).

import { Prng } from "../prng.ts";
import type { SimActor } from "../types.ts";

const PEOPLE: ReadonlyArray<readonly [string, string]> = [
  ["Daniel West", "daniel.west"],
  ["Priya Raman", "priya.raman"],
  ["Zoë Kowalski", "zoe.kowalski"],
  ["Marcus O'Neil", "marcus.oneil"],
  ["Aiko Tanaka", "aiko.tanaka"],
  ["Lena Fischer", "lena.fischer"],
  ["Samuel Okafor", "samuel.okafor"],
  ["Chloé Martin", "chloe.martin"],
  ["Ravi Menon", "ravi.menon"],
  ["Deploy Bot | CI", "deploy-bot"],
];

export function makeActors(seed: number): SimActor[] {
  const prng = new Prng(seed, 11);
  return PEOPLE.map(([name, mail]) => ({ id: prng.alphanumeric(20), name, email: `${mail}@example.com` }));
}

/** Changes made with a console API key show this actor (the platform's own spelling): never a reviewer. */
export function consoleApiActor(seed: number): SimActor {
  return { id: new Prng(seed, 12).alphanumeric(20), name: "CONSOLE API", email: "console-api@example.com" };
}
