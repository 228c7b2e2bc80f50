// `export`: the stored records or the findings as NDJSON, or to a SIEM sink.
import type { Command } from "commander";
import { dbFileOption, dbOption, examples, lazy, opt } from "./help.ts";

export function registerExport(program: Command): void {
  const command = program
    .command("export")
    .description(
      "Write the stored audit records as NDJSON, one OCSF Entity Management event (or the raw record) per " +
        "line, for a period or what a named consumer has not had yet; --findings writes the control " +
        "findings as OCSF Detection Findings (docs/export.md).",
    )
    .addOption(dbOption())
    .addOption(dbFileOption())
    .addOption(
      opt("--project <name>", "only this project of the store", { default: "every project it holds" }),
    )
    .addOption(
      opt("--out <file>", "file to write: FILE.tmp first, fsynced, then renamed", { default: "stdout" }),
    )
    .addOption(opt("--format <format>", "one line per record: ocsf, or raw as stored", { default: "ocsf" }))
    .addOption(opt("--from <day>", "first day, YYYY-MM-DD in UTC", { default: "the whole history" }))
    .addOption(opt("--to <day>", "last day, YYYY-MM-DD in UTC, included", { default: "today" }))
    .option(
      "--cursor <name>",
      "only what the consumer of this name has not had yet; moved once the file is on disk (needs --out)",
    )
    .option("--findings", "write the control findings as OCSF Detection Findings instead of the records")
    .option(
      "--sink <name>",
      "send to this SIEM sink of the config what it has not acknowledged yet, instead of writing NDJSON",
    )
    .addOption(
      opt("--config <file>", "config file with the sinks that --sink names", {
        default: "./flagtrail.config.json",
        env: "FLAGTRAIL_CONFIG",
      }),
    )
    .addOption(opt("--batch-size <n>", "records read and written at a time", { default: "1000" }))
    .action(lazy(() => import("../export.ts")));
  examples(command, [
    "flagtrail export --from 2026-10-01 --to 2026-10-31 --out october.ocsf.ndjson",
    "flagtrail export --cursor siem --out /var/spool/flagtrail/audit-$(date +%Y%m%d%H).ndjson",
    "flagtrail export --format raw | gzip > audit-raw.ndjson.gz",
    "flagtrail export --findings --out findings.ocsf.ndjson",
    "SPLUNK_HEC_TOKEN=… flagtrail export --sink splunk",
  ]);
}
