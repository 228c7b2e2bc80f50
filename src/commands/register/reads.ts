// The read commands: status, report, sql and verify read the store and never write the audit log.
import type { Command } from "commander";
import { collect, dbFileOption, dbOption, examples, lazy, opt } from "./help.ts";

export function registerStatus(program: Command): void {
  const command = program
    .command("status")
    .description(
      "Show what the store holds: records, checkpoints, last runs, coverage gaps, quarantine, mutations, " +
        "entity history, open findings, the daemon's last cycle, delivery leases and SIEM sinks.",
    )
    .addOption(dbOption())
    .addOption(dbFileOption())
    .option("--json", "print as JSON")
    .addOption(
      opt("--project <name>", "only this project of the store", {
        default: "every project it holds, each under its name when several",
      }),
    )
    .addOption(
      opt("--config <file>", "config file whose SIEM sinks are listed also before they deliver", {
        default: "./flagtrail.config.json when it exists",
        env: "FLAGTRAIL_CONFIG",
      }),
    )
    .action(lazy(() => import("../status.ts")));
  examples(command, ["flagtrail status", "flagtrail status --db /var/lib/flagtrail/audit.db --json"]);
}

export function registerReport(program: Command): void {
  const command = program
    .command("report")
    .description(
      "Write experiment-state-changes, config-edits and unreviewed-changes CSVs, a compliance report " +
        "(Markdown, and HTML with --format …,html) and a manifest (SHA-256 of each file, hash-chain head, " +
        "HMAC signature when FLAGTRAIL_SIGNING_KEY is set) for a period.",
    )
    .requiredOption("--from <day>", "first day of the period, YYYY-MM-DD in --tz")
    .requiredOption("--to <day>", "last day of the period, YYYY-MM-DD in --tz, included")
    .addOption(dbOption())
    .addOption(dbFileOption())
    .addOption(
      opt("--project <name>", "only this project of the store", {
        default: "every project it holds, in one report",
      }),
    )
    .option("--out <dir>", "output directory", "reports")
    .addOption(
      opt("--format <list>", "parts to write, comma-separated or repeated: csv, md, html", {
        default: "csv,md",
      }).argParser(collect),
    )
    .option("--tz <zone>", "IANA time zone of the period's days and of the times shown", "UTC")
    .option("--action-type <type...>", "only these action types (repeat or comma-separate)")
    .option("--allow-unknown-action-types", "accept action types missing from the specification's list")
    .option(
      "--force",
      "replace an earlier report's files of the period that differ (the manifest lists them)",
    )
    .option("--no-bom", "write the CSVs without the UTF-8 byte-order mark spreadsheets need to read UTF-8")
    .addOption(
      opt("--config <file>", "config file whose controls the report opens with, see docs/controls.md", {
        default: "./flagtrail.config.json when it exists",
        env: "FLAGTRAIL_CONFIG",
      }),
    )
    .action(lazy(() => import("../report.ts")));
  examples(command, [
    "flagtrail report --from 2026-10-01 --to 2026-10-31",
    "flagtrail report --from 2026-10-01 --to 2026-10-31 --tz Europe/Berlin --format csv,md,html",
    "FLAGTRAIL_SIGNING_KEY=… flagtrail report --from 2026-10-01 --to 2026-10-31 --out /srv/audit",
  ]);
}

export function registerSql(program: Command): void {
  const command = program
    .command("sql")
    .description(
      "Run one read-only SQL query on the store (tables, views experiment_state_changes and config_edits, " +
        "full-text index audit_logs_fts). Only a single read query runs: refused before it runs are writes, " +
        "more than one statement, and on PostgreSQL row locks and server-file functions; these and bad SQL exit 2.",
    )
    .argument("<query>", 'the SQL statement, e.g. "SELECT * FROM config_edits LIMIT 5"')
    .addOption(dbOption())
    .addOption(dbFileOption())
    .addOption(
      opt("--format <format>", "output: table, csv, json, or nl for one JSON object per line", {
        default: "table",
      }),
    )
    .option("--csv", "same as --format csv")
    .option("--json", "same as --format json")
    .option("--nl", "same as --format nl: one JSON object per line")
    .option("--table", "same as --format table")
    .option(
      "--param <name=value>",
      "bind the named parameter @name (repeatable; an integer binds as a number, NULL as NULL, else text)",
      collect,
    )
    .addOption(
      opt("--timeout <seconds>", "stop a query that works longer than this many seconds, exit 1", {
        default: "60",
      }),
    )
    .addOption(
      opt(
        "--project <name>",
        "run the query in this project's part of the store only; over several projects the result's " +
          "first column, project, names each row's project",
        { default: "every project of the store, a read-only snapshot each" },
      ),
    )
    .action(lazy(() => import("../sql.ts")));
  examples(command, [
    'flagtrail sql "SELECT updated_by, count(*) FROM config_edits GROUP BY 1 ORDER BY 2 DESC LIMIT 5"',
    "flagtrail sql --csv \"SELECT * FROM experiment_state_changes WHERE name = 'checkout_test'\" > changes.csv",
    'flagtrail sql --param start=1711666800000 "SELECT count(*) FROM audit_logs WHERE occurred_at >= @start"',
  ]);
}

export function registerVerify(program: Command): void {
  const command = program
    .command("verify")
    .description(
      "Re-walk the store's hash chains (records, entity history, waivers) and name the first broken link, " +
        "check quarantine and coverage against their digests and, when FLAGTRAIL_SIGNING_KEY is set, the " +
        "chain head's signature; with --manifest, re-hash the report files it lists and check its HMAC. " +
        "Exit 1 on any mismatch.",
    )
    .addOption(dbOption())
    .addOption(dbFileOption())
    .option("--manifest <file>", "a report manifest_<from>_<to>.json to check")
    .addOption(
      opt("--project <name>", "only this project of the store; exit 1 names each project failing", {
        default: "each project it holds, on its own",
      }),
    )
    .action(lazy(() => import("../verify.ts")));
  examples(command, [
    "flagtrail verify",
    "flagtrail verify --manifest reports/manifest_2026-10-01_2026-10-31.json",
  ]);
}
