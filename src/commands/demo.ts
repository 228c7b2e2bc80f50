// `flagtrail demo` (npm run demo): the main job on the embedded simulator, end to end.
import { isAbsolute, relative } from "node:path";
import { z } from "zod";
import type { DemoControls } from "../demo/controls.ts";
import { DEMO_DEFAULTS } from "../demo/defaults.ts";
import { currentInvocation, demoCommands } from "../demo/hints.ts";
import { DemoWorldError, runDemo } from "../demo/runDemo.ts";
import { UsageError } from "../errors.ts";
import type { Period } from "../report/period.ts";
import { shellWord } from "../text/shellWord.ts";
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
  }).catch((error: unknown) => {
    throw withWorldFlags(error);
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
  if (result.report.replacedSignature)
    process.stderr.write(
      `Warning: the earlier manifest ${shown(result.report.manifestPath)} was signed; it is replaced by an ` +
        "unsigned one, as FLAGTRAIL_SIGNING_KEY is not set.\n",
    );
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
  const checkCommand = `${commands.flagtrail} check${db}`;
  for (const line of controlLines(result.controls, checkCommand, shown(result.controls.configPath), period))
    out(line);
  if (result.controls.exampleFinding !== undefined) {
    out("Accept a finding with a reason (an exception the next check shows, and no longer fails on):");
    out(
      `  ${commands.flagtrail} waive${db} ${result.controls.exampleFinding} --reason "reviewed after the fact, INC-42" --by "Your Name"`,
    );
  }
  const again =
    options.db === DEMO_DEFAULTS.db ? `Run \`${commands.demo}\` again` : "Run the same command again";
  out(`Done in ${((Date.now() - started) / 1000).toFixed(1)} s. ${again} to see an incremental sync.`);
}

/** The demo check's findings per control, and the command that re-runs it (and exits 1 on them). */
function controlLines(controls: DemoControls, check: string, configPath: string, period: Period): string[] {
  const lines = [
    `Controls of ${configPath}${controls.written ? " (written by the demo: edit it and check again)" : ""}, checked over ${period.from} .. ${period.to}:`,
  ];
  for (const c of controls.controls) {
    const waived = c.waived > 0 ? `, ${c.waived} waived` : "";
    lines.push(`  ${c.id} (${c.kind}, ${c.severity}): ${c.open} open${waived}`);
    // The report's Self-approvals count only the approvals: the line says what else this control counts.
    if (c.approvals !== undefined && c.open > 0)
      lines.push(
        `    ${c.approvals} approvals by their own requester (the report's Self-approvals) and ` +
          `${c.open - c.approvals} changes made by the person who approved their review`,
      );
  }
  const open = controls.controls.reduce((sum, c) => sum + c.open, 0);
  lines.push(
    open > 0
      ? `It exits 1 on ${open === 1 ? "this finding" : `these ${open} findings`}: that is what fails a CI job or a cron run (table, JSON or JUnit XML):`
      : "No open finding: it exits 0. Run it again with:",
  );
  lines.push(`  ${check} --config ${shellWord(configPath)} --from ${period.from} --to ${period.to}`);
  return lines;
}

/** The engine names the demo world's settings; here they are the flags that give them, with their values. */
function withWorldFlags(error: unknown): unknown {
  if (!(error instanceof DemoWorldError)) return error;
  const { seed, records, days } = error.world;
  return new UsageError(
    `${error.location} holds the demo world --seed ${seed} --records ${records} --days ${days}; ` +
      "pass the same values, or another --db for a new world.",
    { cause: error },
  );
}
