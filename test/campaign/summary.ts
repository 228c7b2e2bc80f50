// Global teardown of `npm run test:campaign`: merges the figures every campaign file wrote into
// reports/campaign-full.json and prints them as one table.
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { PROJECT_ROOT } from "../helpers/runCli.ts";

const DIR = join(PROJECT_ROOT, "reports", "campaign-full");

type Row = { case: string; outcome: string } & Record<string, unknown>;

/** A plain-text table of figure rows: case, outcome, the other figures as JSON. */
export function figuresTable(rows: Row[]): string {
  const cells = [
    ["case", "outcome", "figures"],
    ...rows.map(({ case: name, outcome, ...rest }) => [name, outcome, JSON.stringify(rest)]),
  ];
  const width = [0, 1].map((i) => Math.max(...cells.map((r) => r[i]!.length)));
  return cells.map((r) => `${r[0]!.padEnd(width[0]!)}  ${r[1]!.padEnd(width[1]!)}  ${r[2]}`).join("\n");
}

export function setup(): void {
  // Figures of an earlier run must not pass for this one's.
  rmSync(DIR, { recursive: true, force: true });
}

export function teardown(): void {
  if (!existsSync(DIR)) return;
  const rows = readdirSync(DIR)
    .filter((name) => name.endsWith(".json"))
    .sort()
    .flatMap((name) => JSON.parse(readFileSync(join(DIR, name), "utf8")) as Row[]);
  const path = join(PROJECT_ROOT, "reports", "campaign-full.json");
  writeFileSync(path, `${JSON.stringify({ finishedAt: new Date().toISOString(), rows }, null, 2)}\n`);
  process.stdout.write(`\nCampaign figures (${path}):\n${figuresTable(rows)}\n`);
}
