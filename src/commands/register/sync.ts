// `sync` and `daemon`: the daemon runs the sync on a schedule, so both take the sync's options.
import type { Command } from "commander";
import { DEFAULT_BASE_URL } from "../../api/connection.ts";
import { SYNC_DEFAULTS } from "../../sync/defaults.ts";
import {
  collect,
  configOption,
  dbFileOption,
  dbOption,
  environment,
  examples,
  lazy,
  opt,
  SIGNING_KEY_ENV,
} from "./help.ts";

export function registerSync(program: Command): void {
  const command = addSyncOptions(
    program
      .command("sync")
      .description("Fetch the console audit log into the store (incremental after the first run)."),
    SYNC_TEXTS,
  )
    .option(
      "--entities-only",
      "read only the entity history that is due (the backlog first), not the audit log",
    )
    .action(lazy(() => import("../sync.ts")));
  environment(command, SIGNING_KEY_ENV);
  examples(command, [
    "FLAGTRAIL_API_KEY_FILE=~/.config/flagtrail/api-key flagtrail sync",
    "flagtrail sync --since 2024-01-01",
    "flagtrail sync --action-type gate_update --action-type config_conditions_update",
    "flagtrail sync --db postgres://flagtrail@db.internal/flagtrail --json",
    "flagtrail sync --entities-only --rate-share 0.25",
  ]);
}

/** Registers the options of `sync` on a command (sync and daemon share them, with their own texts). */
function addSyncOptions(command: Command, texts: typeof SYNC_TEXTS): Command {
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
      "only these action types (repeat or comma-separate; `flagtrail action-types` lists them)",
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
      opt("--entity-budget <n>", texts.entityBudget, {
        default: `the project's entityBudget, else the audit part's requests, at least ${SYNC_DEFAULTS.entityBudgetFloor}`,
      }),
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
    .option("--json", texts.json)
    .option("--quiet", texts.quiet);
}

const ENTITY_BUDGET = "entity requests per run, most recently edited first, the rest read by later runs";
const SYNC_TEXTS = {
  json: "print the summary as JSON",
  quiet: "no notices or progress on stderr",
  entityBudget: `${ENTITY_BUDGET}; no limit by default with --entities-only`,
};
// The daemon has no --entities-only: its help must not name it.
const DAEMON_TEXTS = {
  json: "log JSON lines on a terminal too (they are the default when stderr is not a terminal)",
  quiet: "log warnings and errors only",
  entityBudget: ENTITY_BUDGET,
};

export function registerDaemon(program: Command): void {
  const command = addSyncOptions(
    program
      .command("daemon")
      .description(
        "Sync on a schedule (node-cron); after each sync, the previous period's report (--report), the " +
          "config's controls and the deliveries to its sinks.",
      )
      .option("--cron <expr>", "cron expression; 6 fields allow seconds", "0 2 * * *")
      .option("--tz <zone>", "time zone of the schedule and of report days", "UTC")
      .option(
        "--report <cadence>",
        "after each sync, report the previous day, ISO week or month: daily, weekly or monthly",
      )
      .option("--out <dir>", "report directory", "reports")
      .addOption(
        opt("--format <list>", "report files, comma-separated or repeated: csv, md, html", {
          default: "csv,md",
        }).argParser(collect),
      )
      .option("--once", "run one cycle now and exit (system cron, systemd timers, CI)")
      .option(
        "--lease-ttl <seconds>",
        "lease lifetime without heartbeat; bounds how long a crashed worker blocks",
        "600",
      ),
    DAEMON_TEXTS,
  ).action(lazy(() => import("../daemon.ts")));
  environment(command, [
    [
      "FLAGTRAIL_SIGNING_KEY",
      "HMAC key that signs the store's chain head (a head signed with another key is refused) and " +
        "the report's manifest; the config's integrity controls check the head with it",
    ],
    SIGNING_KEY_ENV[1],
  ]);
  examples(command, [
    "flagtrail daemon --report monthly --out /var/lib/flagtrail/reports",
    'flagtrail daemon --cron "0 2 * * *" --tz Europe/Berlin --report daily',
    "flagtrail daemon --once --report daily --db /var/lib/flagtrail/audit.db",
  ]);
}
