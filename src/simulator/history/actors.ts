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
