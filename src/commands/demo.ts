// `flagtrail demo` (npm run demo): the main job on the embedded simulator, end to end.
import { isAbsolute, relative } from "node:path";
import { z } from "zod";
import { DEMO_DEFAULTS } from "../demo/defaults.ts";
import { currentInvocation, demoCommands } from "../demo/hints.ts";
import { runDemo } from "../demo/runDemo.ts";
import { parseOptions } from "./options.ts";
import { formatSummary } from "./sync.ts";

const intText = (min: number, max: number) =>
  z
    .string()
    .regex(/^\d+$/, { message: "expected a whole number" })
    .transform(Number)
    .refine((n) => n >= min && n <= max, { message: `must be between ${min} and ${max}` });

const demoOptionsSchema = z.object({
  db: z.string().min(1).default(DEMO_DEFAULTS.db),
  out: z.string().min(1).default(DEMO_DEFAULTS.out),
  seed: intText(0, 2 ** 31).default(DEMO_DEFAULTS.seed),
  records: intText(100, 1_000_000).default(DEMO_DEFAULTS.records),
  days: intText(91, 3650).default(DEMO_DEFAULTS.days),
});

export async function action(raw: Record<string, unknown>): Promise<void> {
  const options = parseOptions(demoOptionsSchema, raw);
  const started = Date.now();
  const out = (line: string) => process.stdout.write(`${line}\n`);
  const result = await runDemo({
    dbPath: options.db,
    outDir: options.out,
    seed: options.seed,
    records: options.records,
    days: options.days,
    onProgress: out,
  });
  out(formatSummary(result.sync).trimEnd());
  out(
    result.incremental
      ? `Incremental run: ${result.sync.inserted} new records since the last demo run${result.sync.inserted > 0 ? " (checkpoint moved forward)" : ""}.`
      : `Backfill done: ${result.sync.inserted} records stored in ${result.location}.`,
  );
  // Paths as the user gave the output folder: absolute stays absolute, relative is from here.
  const shown = (path: string) => (isAbsolute(options.out) ? path : relative(process.cwd(), path));
  const { period } = result.report;
  out(`Reports for ${period.from} .. ${period.to} (last complete month, UTC):`);
  for (const file of result.report.files) out(`  ${shown(file.path)}  sha256 ${file.sha256.slice(0, 16)}…`);
  out(`  ${shown(result.report.manifestPath)}`);
  out("");
  const commands = demoCommands(currentInvocation(), shellWord);
  const html = result.report.files.find((file) => file.path.endsWith(".html"));
  if (html !== undefined)
    out(`Open the compliance report in a browser (print it to PDF for an auditor): ${shown(html.path)}`);
  // A URL is shown with its password masked: the hints then read the store from FLAGTRAIL_DB instead.
  const masked = result.location !== options.db;
  const db = masked ? "" : ` --db ${shellWord(result.location)}`;
  out(
    masked
      ? `Try some SQL over the change history, with FLAGTRAIL_DB set to ${shellWord(result.location)} (its password in place of ***):`
      : "Try some SQL over the change history:",
  );
  out(
    `  ${commands.flagtrail} sql${db} "SELECT updated_by, count(*) AS edits FROM config_edits GROUP BY updated_by ORDER BY edits DESC LIMIT 5"`,
  );
  out(
    `  ${commands.flagtrail} sql${db} "SELECT name, action_type, rule_diff_summary FROM config_edits WHERE rule_diff_summary IS NOT NULL ORDER BY occurred_at DESC LIMIT 5"`,
  );
  out(`Check the store and the report's files against its manifest:`);
  out(`  ${commands.flagtrail} verify${db} --manifest ${shellWord(shown(result.report.manifestPath))}`);
  const again =
    options.db === DEMO_DEFAULTS.db ? `Run \`${commands.demo}\` again` : "Run the same command again";
  out(`Done in ${((Date.now() - started) / 1000).toFixed(1)} s. ${again} to see an incremental sync.`);
}

/**
 * `word` as one shell word for the printed hints: a masked URL's `***` would otherwise be a glob.
 */
function shellWord(word: string): string {
  return /^[\w./:@%+=,-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}
