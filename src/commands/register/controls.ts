// The controls: `check` evaluates them, `waive` and `unwaive` accept a finding or withdraw that.
import type { Command } from "commander";
import { dbFileOption, dbOption, environment, examples, lazy, opt } from "./help.ts";

export function registerCheck(program: Command): void {
  const check = program
    .command("check")
    .description(
      "Evaluate the config file's controls over a period, keep the findings and print them; exit 1 when an " +
        "unwaived finding reaches the --fail-on severity (docs/controls.md).",
    )
    .addOption(dbOption())
    .addOption(dbFileOption())
    .addOption(
      opt("--config <file>", "config file with the controls", {
        default: "./flagtrail.config.json",
        env: "FLAGTRAIL_CONFIG",
      }),
    )
    .addOption(
      opt("--project <name>", "only this project of the store", { default: "every project it holds" }),
    )
    .addOption(
      opt("--from <day>", "first day, YYYY-MM-DD in UTC", {
        default: "since the last check, else 7 days back",
      }),
    )
    .addOption(opt("--to <day>", "last day, YYYY-MM-DD in UTC, included", { default: "today" }))
    .addOption(opt("--format <format>", "output: table, json or junit", { default: "table" }))
    .addOption(
      opt("--fail-on <severity>", "lowest severity that fails: low, medium or high", { default: "low" }),
    )
    .option(
      "--notify",
      "deliver the alerts of new findings to the config's sinks (for cron); exit 1 while some wait undelivered",
    )
    .action(lazy(() => import("../check.ts")));
  environment(check, [
    [
      "FLAGTRAIL_SIGNING_KEY",
      "the integrity controls check the store's chain head signature with it, as verify does; " +
        "without it they cannot see records cut off the end",
    ],
  ]);
  examples(check, [
    "flagtrail check",
    "flagtrail check --from 2026-10-01 --to 2026-10-31 --format junit > controls.xml",
    "flagtrail check --fail-on high --notify",
  ]);
}

export function registerWaive(program: Command): void {
  const waive = program
    .command("waive")
    .description("Accept a finding: who and why, until --expires (append-only, checked by verify).")
    .argument("<finding-id>", "the finding's id, as check prints it")
    .requiredOption("--reason <text>", "why the finding is accepted")
    .requiredOption("--by <name>", "who accepts it")
    .addOption(
      opt("--expires <day>", "last day the waiver holds, YYYY-MM-DD in UTC", { default: "until unwaived" }),
    )
    .addOption(dbOption())
    .addOption(dbFileOption())
    .option("--project <name>", "the finding's project, when several hold that id")
    .action(lazy(() => import("../waive.ts")));
  examples(waive, [
    'flagtrail waive review:8f2c… --reason "emergency fix, reviewed in INC-42" --by "Ada Lovelace" --expires 2026-12-31',
  ]);
}

export function registerUnwaive(program: Command): void {
  const unwaive = program
    .command("unwaive")
    .description("Withdraw a finding's waiver: it is open again (append-only).")
    .argument("<finding-id>", "the finding's id")
    .requiredOption("--by <name>", "who withdraws it")
    .addOption(opt("--reason <text>", "why").default("withdrawn"))
    .addOption(dbOption())
    .addOption(dbFileOption())
    .option("--project <name>", "the finding's project, when several hold that id")
    .action(lazy(() => import("../unwaive.ts")));
  examples(unwaive, ['flagtrail unwaive review:8f2c… --by "Ada Lovelace" --reason "ticket reopened"']);
}
