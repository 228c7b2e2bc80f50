// `flagtrail report`: CSVs, compliance Markdown and a (signed) manifest for a period.
import type { Command } from "commander";
import { z } from "zod";
import { resolveDbPath } from "../config.ts";
import { writeReports } from "../report/writeReports.ts";
import { parseOptions } from "./options.ts";

const day = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, { message: "expected a calendar day YYYY-MM-DD" });

const reportOptionsSchema = z.object({
  from: day,
  to: day,
  db: z.string().optional(),
  out: z.string().min(1).default("reports"),
  format: z
    .string()
    .default("csv,md")
    .transform((text) =>
      text
        .split(",")
        .map((f) => f.trim())
        .filter(Boolean),
    )
    .pipe(z.array(z.enum(["csv", "md"], { message: "formats are csv and md" })).min(1)),
  tz: z.string().min(1).default("UTC"),
  actionType: z
    .array(z.string())
    .default([])
    .transform((list) =>
      list
        .flatMap((t) => t.split(","))
        .map((t) => t.trim())
        .filter(Boolean),
    )
    .pipe(
      z.array(z.string().regex(/^[A-Za-z0-9_]+$/, { message: "an action type is letters, digits and _" })),
    ),
});

export function register(program: Command): void {
  program
    .command("report")
    .description(
      "Write experiment-state-changes and config-edits CSVs, a compliance Markdown report and a manifest " +
        "(SHA-256 of each file, hash-chain head, HMAC signature when FLAGTRAIL_SIGNING_KEY is set) for a period.",
    )
    .requiredOption("--from <day>", "first day of the period, YYYY-MM-DD (in --tz)")
    .requiredOption("--to <day>", "last day of the period, YYYY-MM-DD (in --tz, included)")
    .option("--db <path>", "SQLite database (env FLAGTRAIL_DB, default ./flagtrail.db)")
    .option("--out <dir>", "output directory", "reports")
    .option("--format <list>", "comma-separated: csv, md", "csv,md")
    .option("--tz <zone>", "IANA time zone of the period's days and of the times shown", "UTC")
    .option("--action-type <type...>", "only these action types (repeat or comma-separate)")
    .action(async (raw: Record<string, unknown>) => {
      const options = parseOptions(reportOptionsSchema, raw);
      const result = await writeReports({
        dbPath: resolveDbPath(options),
        from: options.from,
        to: options.to,
        timeZone: options.tz,
        outDir: options.out,
        formats: options.format,
        actionTypes: options.actionType,
      });
      for (const file of result.files)
        process.stdout.write(`${file.path}  ${file.rows} rows  sha256 ${file.sha256}\n`);
      process.stdout.write(
        `${result.manifestPath}  ${result.signed ? "signed" : "unsigned (FLAGTRAIL_SIGNING_KEY not set)"}\n`,
      );
    });
}
