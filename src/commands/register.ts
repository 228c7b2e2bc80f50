// Every command as commander sees it: name, help text, options. This module is loaded at every start
// (`flagtrail --version` included), so it imports commander and constants only; an action imports its
// command module (./sync.ts, …, with zod, the engine, SQLite) when that command runs.
//
// One help style for every option: what it does, then one parenthesis whose parts come in this order,
// separated by "; ": `required`, `one of: a, b`, `default: X`, `env: NAME` (describeOption below;
// test/commands/help.test.ts holds every command to it). Every command ends its help with examples.
import { type Command, Option } from "commander";
import { DEFAULT_BASE_URL } from "../api/connection.ts";
import { DEMO_DEFAULTS } from "../demo/defaults.ts";
import { SYNC_DEFAULTS } from "../sync/defaults.ts";

/** An action that loads its module on first use; commander's arguments are passed through. */
function lazy<A extends unknown[]>(load: () => Promise<{ action: (...args: A) => unknown }>) {
  return async (...args: A): Promise<void> => {
    const module = await load();
    await module.action(...args);
  };
}

function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

/**
 * A default or a variable the command itself applies (commander does not: the order of flags, variables
 * and files is flagtrail's), shown in help like the defaults commander applies.
 */
interface HelpMeta {
  default?: string;
  env?: string;
}
const helpMeta = new WeakMap<Option, HelpMeta>();

function opt(flags: string, text: string, meta: HelpMeta = {}): Option {
  const option = new Option(flags, text);
  helpMeta.set(option, meta);
  return option;
}

/** The help line of an option: its text, then `(required; one of: …; default: …; env: …)`. */
function describeOption(option: Option): string {
  const meta = helpMeta.get(option) ?? {};
  const parts: string[] = [];
  if (option.mandatory) parts.push("required");
  if (option.argChoices) parts.push(`one of: ${option.argChoices.join(", ")}`);
  const fallback =
    meta.default ??
    option.defaultValueDescription ??
    (typeof option.defaultValue === "string" ? option.defaultValue : undefined);
  if (fallback !== undefined) parts.push(`default: ${fallback}`);
  const env = meta.env ?? option.envVar;
  if (env !== undefined) parts.push(`env: ${env}`);
  return parts.length > 0 ? `${option.description} (${parts.join("; ")})` : option.description;
}

function examples(command: Command, lines: readonly string[]): Command {
  return command.addHelpText("after", `\nExamples:\n${lines.map((l) => `  $ ${l}`).join("\n")}\n`);
}

/** Where a password goes instead of --db, whose value other users of the machine see (ps). */
const dbOption = () =>
  opt(
    "--db <path|url>",
    "SQLite file or postgres:// URL of the store; a password in a URL here is visible to other users " +
      "(ps): prefer FLAGTRAIL_DB, PGPASSWORD or --db-file",
    { default: "./flagtrail.db", env: "FLAGTRAIL_DB" },
  );

const dbFileOption = () =>
  opt("--db-file <path>", "file holding the --db value, trimmed: keeps a URL's password out of ps");

export function registerCommands(program: Command): void {
  // Set before the commands are added: each copies the program's help settings when created.
  program.configureHelp({ optionDescription: describeOption });
  registerSync(program);
  registerStatus(program);
  registerReport(program);
  registerSql(program);
  registerVerify(program);
  registerCheck(program);
  registerExport(program);
  registerDaemon(program);
  registerDoctor(program);
  registerActionTypes(program);
  registerDemo(program);
  registerSimulate(program);
}

function registerSync(program: Command): void {
  const command = addSyncOptions(
    program
      .command("sync")
      .description("Fetch the console audit log into the store (incremental after the first run)."),
    SYNC_OUTPUT,
  )
    .option(
      "--entities-only",
      "read only the entity history that is due (the backlog first), not the audit log",
    )
    .action(lazy(() => import("./sync.ts")));
  examples(command, [
    "FLAGTRAIL_API_KEY_FILE=~/.config/flagtrail/api-key flagtrail sync",
    "flagtrail sync --since 2024-01-01",
    "flagtrail sync --action-type gate_update --action-type config_conditions_update",
    "flagtrail sync --db postgres://flagtrail@db.internal/flagtrail --json",
    "flagtrail sync --entities-only --rate-share 0.25",
  ]);
}

/** Registers the options of `sync` on a command (sync and daemon share them). */
function addSyncOptions(command: Command, output: { json: string; quiet: string }): Command {
  return command
    .addOption(
      opt("--since <date>", "first day to sync, YYYY-MM-DD", {
        default: "first run 90 days back, later the checkpoint's day minus --lookback-days",
      }),
    )
    .addOption(
      opt("--until <date>", "last day to sync, YYYY-MM-DD; a server east of UTC has its today read", {
        default: "tomorrow in UTC",
      }),
    )
    .option(
      "--action-type <type>",
      "only this action type (repeatable; `flagtrail action-types` lists them)",
      collect,
    )
    .option("--allow-unknown-action-types", "accept action types missing from the specification's list")
    .option("--allow-before-2015", "accept a --since before 2015 (refused as a likely typo otherwise)")
    .addOption(dbOption())
    .addOption(dbFileOption())
    .addOption(
      opt("--page-size <n>", "records per request", {
        default: `the largest the server grants, asked once with ${SYNC_DEFAULTS.preferredPageSize} and remembered`,
      }),
    )
    .option("--concurrency <n>", "requests in flight at once", String(SYNC_DEFAULTS.concurrency))
    .option(
      "--lookback-days <n>",
      "days before the checkpoint checked by count; re-read whole with --no-coverage",
      String(SYNC_DEFAULTS.lookbackDays),
    )
    .option("--full", "ignore the checkpoint and re-read the whole range")
    .option("--no-coverage", "skip the per-day comparison of local and server record counts")
    .option("--no-entities", "skip config versions, layer experiments and event metrics (entity history)")
    .option("--event <name>", "also read the metrics derived from this event (repeatable)", collect)
    .addOption(
      opt(
        "--entity-budget <n>",
        "entity requests per run, most recently edited first, the rest read by later runs; no limit by default with --entities-only",
        {
          default: `the project's entityBudget, else the audit part's requests, at least ${SYNC_DEFAULTS.entityBudgetFloor}`,
        },
      ),
    )
    .addOption(
      opt(
        "--rate-share <share>",
        "share of the API's documented rate limits this run may use, above 0 to 1",
        {
          default: `the project's rateShare, else ${SYNC_DEFAULTS.rateShare}`,
        },
      ),
    )
    .addOption(
      opt("--base-url <url>", "console API base URL", {
        default: DEFAULT_BASE_URL,
        env: "FLAGTRAIL_BASE_URL",
      }),
    )
    .addOption(
      opt("--api-key-file <path>", "file holding the console API key, trimmed; keep it mode 0600", {
        env: "FLAGTRAIL_API_KEY_FILE",
      }),
    )
    .addOption(
      opt(
        "--api-key <key>",
        "console API key; prefer FLAGTRAIL_API_KEY or --api-key-file: a key on the command line is " +
          "visible to other users (ps) and is written to npm's debug log under npx",
        { env: "FLAGTRAIL_API_KEY" },
      ),
    )
    .addOption(
      opt("--auth-header <name>", "header carrying the key", {
        default: "STATSIG-API-KEY",
        env: "FLAGTRAIL_AUTH_HEADER",
      }),
    )
    .addOption(configOption())
    .addOption(
      opt("--project <name>", "only this project of the config", { default: "every project it lists" }),
    )
    .option("--json", output.json)
    .option("--quiet", output.quiet);
}

const configOption = () =>
  opt(
    "--config <file>",
    "projects config; it replaces --base-url, --api-key-file, --api-key and --auth-header",
    {
      default: "./flagtrail.config.json when it exists",
      env: "FLAGTRAIL_CONFIG",
    },
  );

const SYNC_OUTPUT = { json: "print the summary as JSON", quiet: "no notices or progress on stderr" };
const DAEMON_OUTPUT = {
  json: "log JSON lines on a terminal too (they are the default when stderr is not a terminal)",
  quiet: "log warnings and errors only",
};

function registerStatus(program: Command): void {
  const command = program
    .command("status")
    .description(
      "Show what the store holds: records, checkpoints, last runs, coverage gaps, quarantine, mutations.",
    )
    .addOption(dbOption())
    .addOption(dbFileOption())
    .option("--json", "print as JSON")
    .addOption(
      opt("--project <name>", "only this project of the store", {
        default: "every project it holds, each under its name when several",
      }),
    )
    .action(lazy(() => import("./status.ts")));
  examples(command, ["flagtrail status", "flagtrail status --db /var/lib/flagtrail/audit.db --json"]);
}

function registerReport(program: Command): void {
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
    .option("--format <list>", "comma-separated parts to write: csv, md, html", "csv,md")
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
    .action(lazy(() => import("./report.ts")));
  examples(command, [
    "flagtrail report --from 2026-10-01 --to 2026-10-31",
    "flagtrail report --from 2026-10-01 --to 2026-10-31 --tz Europe/Berlin --format csv,md,html",
    "FLAGTRAIL_SIGNING_KEY=… flagtrail report --from 2026-10-01 --to 2026-10-31 --out /srv/audit",
  ]);
}

function registerSql(program: Command): void {
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
      opt("--format <format>", "output: table, csv, json or nl, the last one JSON object per line", {
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
    .action(lazy(() => import("./sql.ts")));
  examples(command, [
    'flagtrail sql "SELECT updated_by, count(*) FROM config_edits GROUP BY 1 ORDER BY 2 DESC LIMIT 5"',
    "flagtrail sql --csv \"SELECT * FROM experiment_state_changes WHERE name = 'checkout_test'\" > changes.csv",
    'flagtrail sql --param start=1711666800000 "SELECT count(*) FROM audit_logs WHERE occurred_at >= @start"',
  ]);
}

function registerVerify(program: Command): void {
  const command = program
    .command("verify")
    .description(
      "Re-walk the store's hash chain and name the first broken link, check quarantine and coverage against " +
        "their digests and, when FLAGTRAIL_SIGNING_KEY is set, the chain head's signature; with --manifest, " +
        "re-hash the report files it lists and check its HMAC. Exit 1 on any mismatch.",
    )
    .addOption(dbOption())
    .addOption(dbFileOption())
    .option("--manifest <file>", "a report manifest_<from>_<to>.json to check")
    .addOption(
      opt("--project <name>", "only this project of the store; exit 1 names each project failing", {
        default: "each project it holds, on its own",
      }),
    )
    .action(lazy(() => import("./verify.ts")));
  examples(command, [
    "flagtrail verify",
    "flagtrail verify --manifest reports/manifest_2026-10-01_2026-10-31.json",
  ]);
}

function registerCheck(program: Command): void {
  const check = program
    .command("check")
    .description(
      "Evaluate the config file's controls over a period, keep the findings and print them; exit 1 when an " +
        "unwaived finding reaches the --fail-on severity (docs/controls.md).",
    )
    .addOption(dbOption())
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
    .option("--notify", "deliver the alerts of new findings to the config's sinks (for cron)")
    .action(lazy(() => import("./check.ts")));
  examples(check, [
    "flagtrail check",
    "flagtrail check --from 2026-10-01 --to 2026-10-31 --format junit > controls.xml",
    "flagtrail check --fail-on high --notify",
  ]);
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
    .option("--project <name>", "the finding's project, when several hold that id")
    .action(lazy(() => import("./waive.ts")));
  examples(waive, [
    'flagtrail waive review:8f2c… --reason "emergency fix, reviewed in INC-42" --by "Ada Lovelace" --expires 2026-12-31',
  ]);
  const unwaive = program
    .command("unwaive")
    .description("Withdraw a finding's waiver: it is open again (append-only).")
    .argument("<finding-id>", "the finding's id")
    .requiredOption("--by <name>", "who withdraws it")
    .addOption(opt("--reason <text>", "why").default("withdrawn"))
    .addOption(dbOption())
    .option("--project <name>", "the finding's project, when several hold that id")
    .action(lazy(() => import("./unwaive.ts")));
  examples(unwaive, ['flagtrail unwaive review:8f2c… --by "Ada Lovelace" --reason "ticket reopened"']);
}

function registerExport(program: Command): void {
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
    .action(lazy(() => import("./export.ts")));
  examples(command, [
    "flagtrail export --from 2026-10-01 --to 2026-10-31 --out october.ocsf.ndjson",
    "flagtrail export --cursor siem --out /var/spool/flagtrail/audit.ndjson",
    "flagtrail export --format raw | gzip > audit-raw.ndjson.gz",
    "flagtrail export --findings --out findings.ocsf.ndjson",
    "SPLUNK_HEC_TOKEN=… flagtrail export --sink splunk",
  ]);
}

function registerDaemon(program: Command): void {
  const command = addSyncOptions(
    program
      .command("daemon")
      .description("Sync on a schedule (node-cron), optionally followed by the previous period's report.")
      .option("--cron <expr>", "cron expression; 6 fields allow seconds", "0 2 * * *")
      .option("--tz <zone>", "time zone of the schedule and of report days", "UTC")
      .option(
        "--report <cadence>",
        "after each sync, report the previous day, ISO week or month: daily, weekly or monthly",
      )
      .option("--out <dir>", "report directory", "reports")
      .option("--format <list>", "report files, comma-separated: csv, md, html", "csv,md")
      .option("--once", "run one cycle now and exit (system cron, systemd timers, CI)")
      .option(
        "--lease-ttl <seconds>",
        "lease lifetime without heartbeat; bounds how long a crashed worker blocks",
        "600",
      ),
    DAEMON_OUTPUT,
  ).action(lazy(() => import("./daemon.ts")));
  examples(command, [
    "flagtrail daemon --report monthly --out /var/lib/flagtrail/reports",
    'flagtrail daemon --cron "0 2 * * *" --tz Europe/Berlin --report daily',
    "flagtrail daemon --once --report daily --db /var/lib/flagtrail/audit.db",
  ]);
}

function registerDoctor(program: Command): void {
  const command = program
    .command("doctor")
    .description(
      "Check the set-up, one ok/warn/fail line each: Node version, store, migrations, API key (one cheap " +
        "request), clock skew, free disk space, file modes, signing key, config. Exit 1 on any fail.",
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
    .action(lazy(() => import("./doctor.ts")));
  examples(command, [
    "flagtrail doctor",
    "FLAGTRAIL_API_KEY_FILE=/etc/flagtrail/api-key flagtrail doctor --db /var/lib/flagtrail/audit.db",
  ]);
}

function registerActionTypes(program: Command): void {
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
    .action(lazy(() => import("./listActionTypes.ts")));
  examples(command, [
    "flagtrail action-types --category config_edit",
    "flagtrail action-types --format json",
  ]);
}

function registerDemo(program: Command): void {
  const command = program
    .command("demo")
    .description(
      "Run the main job on the embedded simulator: seeded history > 90 days → sync → last month's reports " +
        "(CSV, Markdown, HTML, manifest).",
    )
    .option(
      "--db <path|url>",
      "demo database, SQLite file or postgres:// URL; a password in a URL here is visible to other users " +
        "(ps): prefer PGPASSWORD",
      DEMO_DEFAULTS.db,
    )
    .option("--out <dir>", "report directory", DEMO_DEFAULTS.out)
    .option("--seed <n>", "seed of the simulated history", String(DEMO_DEFAULTS.seed))
    .option("--records <n>", "audit records in the simulated history", String(DEMO_DEFAULTS.records))
    .option("--days <n>", "days of simulated history, more than 90", String(DEMO_DEFAULTS.days))
    .action(lazy(() => import("./demo.ts")));
  examples(command, ["flagtrail demo", "flagtrail demo --db /tmp/demo.db --out /tmp/demo-reports --seed 7"]);
}

function registerSimulate(program: Command): void {
  const command = program
    .command("simulate")
    .description(
      "Run the console API simulator (audit log, entity routes, faults) on 127.0.0.1 until SIGINT/SIGTERM.",
    )
    .option("--host <host>", "address to bind", "127.0.0.1")
    .option("--port <n>", "port to listen on, 0 for any free port", "0")
    .addOption(
      opt("--api-key <key>", "console key the simulator accepts", { default: "console-simulator-key" }).env(
        "FLAGTRAIL_SIM_API_KEY",
      ),
    )
    .addOption(opt("--auth-header <name>", "header carrying the key", { default: "STATSIG-API-KEY" }))
    .addOption(
      opt("--server-secret <secret>", "secret the event webhook accepts", {
        default: "secret-simulator-key",
      }).env("FLAGTRAIL_SIM_SERVER_SECRET"),
    )
    .option("--seed <n>", "seed of the history and the faults", "1")
    .addOption(
      opt("--id-seed <n>", "seed of the record ids alone: two projects with overlapping ids", {
        default: "--seed",
      }),
    )
    .option("--records <n>", "audit log records to generate", "5000")
    .option("--days <n>", "days of history, ending now", "120")
    .option("--tz <zone>", "IANA zone of the server's date/time texts", "America/Los_Angeles")
    .addOption(
      new Option("--date-style <style>", "date/time text form").choices(["short", "long"]).default("short"),
    )
    .addOption(
      new Option("--link-style <style>", "form of nextPage/previousPage")
        .choices(["host", "relative"])
        .default("host"),
    )
    .addOption(
      opt("--now <instant>", "simulator clock's start, epoch ms or ISO 8601", { default: "the real now" }),
    )
    .addOption(opt("--max-limit <n>", "declared largest audit log limit", { default: "1000" }))
    .addOption(
      new Option("--over-limit <mode>", "above --max-limit: grant the maximum, or answer 400")
        .choices(["clamp", "reject"])
        .default(undefined, "clamp"),
    )
    .option("--max-page-size <n>", "fault: clamp the audit log's limit to this without declaring it")
    .option("--rate-limit", "enforce rate limits: 100/10s,900/15m unless --rate-limit-windows says otherwise")
    .option("--rate-limit-windows <spec>", "rate limit windows, e.g. 100/10s,900/15m (implies --rate-limit)")
    .option("--no-retry-after", "send 429s without a Retry-After header")
    .option("--error-rate <p>", "probability of a 5xx per request")
    .option("--latency <ms>", "fixed latency per request")
    .option("--jitter <ms>", "extra random latency up to this")
    .option("--reset-rate <p>", "probability of a connection reset per request")
    .option("--truncate-rate <p>", "probability of a truncated JSON body per request")
    .option("--malformed-rate <p>", "share of records served malformed")
    .option("--mutate-rate <p>", "probability per audit log request of a record changed under its id")
    .option("--head-insert-rate <p>", "probability per later-page request of new records at the head")
    .addOption(opt("--head-insert-count <n>", "records per head insert", { default: "5" }))
    .option(
      "--error-status <code>",
      "status of every injected 5xx (500, 502, 503 or 504) instead of a random one",
    )
    .option("--throttle-rate <p>", "probability of a 429 without Retry-After per request (1: endless 429)")
    .option("--non-json-rate <p>", "probability of a 200 whose body is not JSON per request")
    .option("--html-error-rate <p>", "probability of a 502 HTML error page per request")
    .option("--wrong-envelope", "serve audit log 200s as JSON that is not the list envelope")
    .option("--lying-total <n>", "add n to every audit log totalItems")
    .option("--repeating-page", "serve page 1 for every page, with totalItems 1e9")
    .option(
      "--endless-fresh-ids",
      "after the real records, pages of fresh ids forever, totalItems growing a page each",
    )
    .action(lazy(() => import("./simulate.ts")));
  examples(command, [
    "flagtrail simulate --port 4010 --seed 7 --records 20000 --days 180",
    "flagtrail simulate --rate-limit --error-rate 0.05 --latency 50",
    "FLAGTRAIL_API_KEY=console-simulator-key flagtrail sync --base-url http://127.0.0.1:4010",
  ]);
}
