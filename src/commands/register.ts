// Every command as commander sees it: name, help text, options. This module is loaded at every start
// (`flagtrail --version` included), so it imports commander and constants only; an action imports its
// command module (./sync.ts, …, with zod, the engine, SQLite) when that command runs.
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

const DB_OPTION = [
  "--db <path|url>",
  "SQLite file or postgres:// URL (env FLAGTRAIL_DB, default ./flagtrail.db)",
] as const;

export function registerCommands(program: Command): void {
  registerSync(program);
  registerStatus(program);
  registerReport(program);
  registerSql(program);
  registerVerify(program);
  registerCheck(program);
  registerDaemon(program);
  registerDemo(program);
  registerSimulate(program);
}

function registerSync(program: Command): void {
  addSyncOptions(
    program
      .command("sync")
      .description("Fetch the console audit log into the store (incremental after the first run)."),
    SYNC_OUTPUT,
  ).action(lazy(() => import("./sync.ts")));
}

/** Registers the options of `sync` on a command (sync and daemon share them). */
function addSyncOptions(command: Command, output: { json: string; quiet: string }): Command {
  return command
    .option("--since <date>", "first day to sync, YYYY-MM-DD (first run default: 90 days back)")
    .option(
      "--until <date>",
      "last day to sync, YYYY-MM-DD (default: tomorrow in UTC, so a server east of UTC has its today read)",
    )
    .option("--action-type <type>", "only this action type (repeatable)", collect)
    .option("--allow-unknown-action-types", "accept action types missing from the specification's list")
    .option("--allow-before-2015", "accept a --since before 2015 (refused by default as a likely typo)")
    .option(...DB_OPTION)
    .option(
      "--page-size <n>",
      `records per request (default: the largest the server grants, asked once with ${SYNC_DEFAULTS.preferredPageSize} and remembered)`,
    )
    .option("--concurrency <n>", "requests in flight at once", String(SYNC_DEFAULTS.concurrency))
    .option(
      "--lookback-days <n>",
      "days before the checkpoint checked by count (re-read whole with --no-coverage)",
      String(SYNC_DEFAULTS.lookbackDays),
    )
    .option("--full", "ignore the checkpoint and re-read the whole range")
    .option("--no-coverage", "skip the per-day comparison of local and server record counts")
    .option("--no-entities", "skip config versions, layer experiments and event metrics (entity history)")
    .option("--event <name>", "also read the metrics derived from this event (repeatable)", collect)
    .option("--base-url <url>", `console API base URL (env FLAGTRAIL_BASE_URL, default ${DEFAULT_BASE_URL})`)
    .option("--api-key-file <path>", "file holding the console API key, trimmed (env FLAGTRAIL_API_KEY_FILE)")
    .option(
      "--api-key <key>",
      "console API key; prefer FLAGTRAIL_API_KEY or --api-key-file: a key on the command line is " +
        "visible to other users (ps) and is written to npm's debug log under npx",
    )
    .option(
      "--auth-header <name>",
      "header carrying the key (env FLAGTRAIL_AUTH_HEADER, default STATSIG-API-KEY)",
    )
    .option(
      "--config <file>",
      "projects config (env FLAGTRAIL_CONFIG, default ./flagtrail.config.json when it exists); it replaces the four options above",
    )
    .option("--project <name>", "only this project of the config (default: every project it lists)")
    .option("--json", output.json)
    .option("--quiet", output.quiet);
}

const SYNC_OUTPUT = { json: "print the summary as JSON", quiet: "no notices or progress on stderr" };
const DAEMON_OUTPUT = {
  json: "log JSON lines on a terminal too (they are the default when stderr is not a terminal)",
  quiet: "log warnings and errors only",
};

function registerStatus(program: Command): void {
  program
    .command("status")
    .description(
      "Show what the store holds: records, checkpoints, last runs, coverage gaps, quarantine, mutations.",
    )
    .option(...DB_OPTION)
    .option("--json", "print as JSON")
    .option(
      "--project <name>",
      "only this project of the store (default: every project it holds, each under its name when several)",
    )
    .action(lazy(() => import("./status.ts")));
}

function registerReport(program: Command): void {
  program
    .command("report")
    .description(
      "Write experiment-state-changes, config-edits and unreviewed-changes CSVs, a compliance Markdown report and a manifest " +
        "(SHA-256 of each file, hash-chain head, HMAC signature when FLAGTRAIL_SIGNING_KEY is set) for a period.",
    )
    .requiredOption("--from <day>", "first day of the period, YYYY-MM-DD (in --tz)")
    .requiredOption("--to <day>", "last day of the period, YYYY-MM-DD (in --tz, included)")
    .option(...DB_OPTION)
    .option(
      "--project <name>",
      "only this project of the store (default: every project it holds, in one report)",
    )
    .option("--out <dir>", "output directory", "reports")
    .option("--format <list>", "comma-separated: csv, md, html", "csv,md")
    .option("--tz <zone>", "IANA time zone of the period's days and of the times shown", "UTC")
    .option("--action-type <type...>", "only these action types (repeat or comma-separate)")
    .option("--allow-unknown-action-types", "accept action types missing from the specification's list")
    .option(
      "--force",
      "replace an earlier report's files of the period that differ (the manifest lists them)",
    )
    .option("--no-bom", "write the CSVs without the UTF-8 byte-order mark spreadsheets need to read UTF-8")
    .action(lazy(() => import("./report.ts")));
}

function registerSql(program: Command): void {
  program
    .command("sql")
    .description(
      "Run one read-only SQL query on the store (tables, views experiment_state_changes and config_edits, " +
        "FTS index audit_logs_fts). Writes are refused by the database itself (SQLite: statement.readonly, then a read-only, query_only connection; PostgreSQL: a READ ONLY transaction); both they and bad SQL exit with 2.",
    )
    .argument("<query>", 'the SQL statement, e.g. "SELECT * FROM config_edits LIMIT 5"')
    .option(...DB_OPTION)
    .option("--format <format>", "table, csv, json or nl (newline-delimited JSON); default table")
    .option("--csv", "same as --format csv")
    .option("--json", "same as --format json")
    .option("--nl", "same as --format nl: one JSON object per line")
    .option("--table", "same as --format table")
    .option(
      "--param <name=value>",
      "bind the named parameter @name (repeatable; an integer binds as a number, NULL as NULL, else text)",
      collect,
    )
    .option(
      "--project <name>",
      "run the query in this project's part of the store only; by default, on a store of several projects, " +
        "it runs in each one's (a read-only snapshot each) and the result's first column, project, names each row's project",
    )
    .action(lazy(() => import("./sql.ts")));
}

function registerVerify(program: Command): void {
  program
    .command("verify")
    .description(
      "Re-walk the store's hash chain and name the first broken link, check quarantine and coverage against " +
        "their digests and, when FLAGTRAIL_SIGNING_KEY is set, the chain head's signature; with --manifest, " +
        "re-hash the report files it lists and check its HMAC. Exit 1 on any mismatch.",
    )
    .option(...DB_OPTION)
    .option("--manifest <file>", "a report manifest_<from>_<to>.json to check")
    .option(
      "--project <name>",
      "only this project of the store (default: each project it holds, on its own; exit 1 names those failing)",
    )
    .action(lazy(() => import("./verify.ts")));
}

function registerCheck(program: Command): void {
  program
    .command("check")
    .description(
      "Evaluate the controls of the config file over a period, keep the findings, print them; exit 1 when an unwaived finding reaches --fail-on (docs/controls.md).",
    )
    .option(...DB_OPTION)
    .option(
      "--config <file>",
      "config file with the controls (env FLAGTRAIL_CONFIG, default ./flagtrail.config.json)",
    )
    .option("--project <name>", "only this project of the store (default: every project it holds)")
    .option("--from <day>", "first day, YYYY-MM-DD UTC (default: since the last check, else the last 7 days)")
    .option("--to <day>", "last day, YYYY-MM-DD UTC, included (default: today)")
    .option("--format <format>", "table, json or junit", "table")
    .option("--fail-on <severity>", "lowest severity that fails the check: low, medium or high", "low")
    .option("--notify", "deliver the alerts of new findings to the config's sinks (for cron)")
    .action(lazy(() => import("./check.ts")));
  program
    .command("waive")
    .description("Accept a finding: who and why, until --expires (append-only, checked by verify).")
    .argument("<finding-id>", "the finding's id, as check prints it")
    .requiredOption("--reason <text>", "why the finding is accepted")
    .requiredOption("--by <name>", "who accepts it")
    .option("--expires <day>", "last day the waiver holds, YYYY-MM-DD (UTC); default: until unwaived")
    .option(...DB_OPTION)
    .option("--project <name>", "the finding's project, when several hold that id")
    .action(lazy(() => import("./waive.ts")));
  program
    .command("unwaive")
    .description("Withdraw a finding's waiver: it is open again (append-only).")
    .argument("<finding-id>", "the finding's id")
    .requiredOption("--by <name>", "who withdraws it")
    .option("--reason <text>", "why", "withdrawn")
    .option(...DB_OPTION)
    .option("--project <name>", "the finding's project, when several hold that id")
    .action(lazy(() => import("./unwaive.ts")));
}

function registerDaemon(program: Command): void {
  addSyncOptions(
    program
      .command("daemon")
      .description("Sync on a schedule (node-cron), optionally followed by the previous period's report.")
      .option("--cron <expr>", "cron expression; 6 fields allow seconds", "0 2 * * *")
      .option("--tz <zone>", "time zone of the schedule and of report days", "UTC")
      .option(
        "--report <cadence>",
        "after each sync, report the previous day | week | month (daily, weekly, monthly)",
      )
      .option("--out <dir>", "report directory", "reports")
      .option("--once", "run one cycle now and exit (system cron, systemd timers, CI)")
      .option(
        "--lease-ttl <seconds>",
        "lease lifetime without heartbeat; bounds how long a crashed worker blocks",
        "600",
      ),
    DAEMON_OUTPUT,
  ).action(lazy(() => import("./daemon.ts")));
}

function registerDemo(program: Command): void {
  program
    .command("demo")
    .description(
      "Run the main job on the embedded simulator: seeded history > 90 days → sync → last month's reports.",
    )
    .option("--db <path>", "demo database", DEMO_DEFAULTS.db)
    .option("--out <dir>", "report directory", DEMO_DEFAULTS.out)
    .option("--seed <n>", "seed of the simulated history", String(DEMO_DEFAULTS.seed))
    .option("--records <n>", "audit records in the simulated history", String(DEMO_DEFAULTS.records))
    .option("--days <n>", "days of simulated history (more than 90)", String(DEMO_DEFAULTS.days))
    .action(lazy(() => import("./demo.ts")));
}

function registerSimulate(program: Command): void {
  program
    .command("simulate")
    .description(
      "Run the console API simulator (audit log, entity routes, faults) on 127.0.0.1 until SIGINT/SIGTERM.",
    )
    .option("--host <host>", "address to bind", "127.0.0.1")
    .option("--port <n>", "port to listen on (0 = any free port)", "0")
    .addOption(
      new Option("--api-key <key>", "console key the simulator accepts (default console-simulator-key)").env(
        "FLAGTRAIL_SIM_API_KEY",
      ),
    )
    .option("--auth-header <name>", "header carrying the key (default STATSIG-API-KEY)")
    .addOption(
      new Option("--server-secret <secret>", "secret the event webhook accepts").env(
        "FLAGTRAIL_SIM_SERVER_SECRET",
      ),
    )
    .option("--seed <n>", "seed of the history and the faults", "1")
    .option(
      "--id-seed <n>",
      "seed of the record ids alone (default: --seed): two projects with overlapping ids",
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
    .option("--now <instant>", "simulator clock's start (epoch ms or ISO 8601); default the real now")
    .option("--max-limit <n>", "declared largest audit log limit (default 1000)")
    .addOption(
      new Option(
        "--over-limit <mode>",
        "above --max-limit: grant the maximum, or answer 400 (default clamp)",
      ).choices(["clamp", "reject"]),
    )
    .option("--max-page-size <n>", "fault: clamp the audit log's limit to this without declaring it")
    .option("--rate-limit", "enforce rate limits (default 100/10s,900/15m)")
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
    .option("--head-insert-count <n>", "records per head insert (default 5)")
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
    .action(lazy(() => import("./simulate.ts")));
}
