// The set-up commands: `doctor` checks the installation, `action-types` lists what --action-type accepts.
import { type Command, Option } from "commander";
import { DEFAULT_BASE_URL } from "../../api/connection.ts";
import { configOption, dbFileOption, dbOption, examples, lazy, opt } from "./help.ts";

export function registerDoctor(program: Command): void {
  const command = program
    .command("doctor")
    .description(
      "Check the set-up, one ok/warn/fail line each: Node version, store, migrations, a SQLite store's free " +
        "pages, API key (one cheap request), clock skew, free disk space, file modes, signing key, chain head " +
        "(its signature against the key, as the next sync checks it), config, sink secrets. Exit 1 on any fail.",
    )
    .addOption(dbOption())
    .addOption(dbFileOption())
    .addOption(
      opt("--base-url <url>", "console API base URL", {
        default: DEFAULT_BASE_URL,
        env: "FLAGTRAIL_BASE_URL",
      }),
    )
    .addOption(
      opt("--api-key-file <path>", "file holding the console API key", { env: "FLAGTRAIL_API_KEY_FILE" }),
    )
    .addOption(
      opt("--api-key <key>", "console API key; prefer the variable or a key file", {
        env: "FLAGTRAIL_API_KEY",
      }),
    )
    .addOption(
      opt("--auth-header <name>", "header carrying the key", {
        default: "STATSIG-API-KEY",
        env: "FLAGTRAIL_AUTH_HEADER",
      }),
    )
    .addOption(configOption())
    .option("--json", "print the checks as JSON")
    .action(lazy(() => import("../doctor.ts")));
  examples(command, [
    "flagtrail doctor",
    "FLAGTRAIL_API_KEY_FILE=/etc/flagtrail/api-key flagtrail doctor --db /var/lib/flagtrail/audit.db",
  ]);
}

export function registerActionTypes(program: Command): void {
  const command = program
    .command("action-types")
    .description(
      "List the action types of the specification (the values --action-type accepts) with their category.",
    )
    .addOption(
      new Option("--category <category>", "only the action types of this category").choices([
        "experiment_state_change",
        "config_edit",
        "other",
      ]),
    )
    .addOption(new Option("--format <format>", "output").choices(["table", "json"]).default("table"))
    .action(lazy(() => import("../listActionTypes.ts")));
  examples(command, [
    "flagtrail action-types --category config_edit",
    "flagtrail action-types --format json",
  ]);
}
