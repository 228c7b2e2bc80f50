// The commands that run the embedded console API simulator: `demo` (the main job on it) and `simulate`.
import { type Command, Option } from "commander";
import { DEMO_DEFAULTS } from "../../demo/defaults.ts";
import { examples, lazy, opt } from "./help.ts";

export function registerDemo(program: Command): void {
  const command = program
    .command("demo")
    .description(
      "Run the main job on the embedded simulator: seeded history > 90 days → sync → last month's reports " +
        "(CSV, Markdown, HTML, manifest) → the controls of an example config, written into --out, checked " +
        "over that month.",
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
    .action(lazy(() => import("../demo.ts")));
  examples(command, ["flagtrail demo", "flagtrail demo --db /tmp/demo.db --out /tmp/demo-reports --seed 7"]);
}

export function registerSimulate(program: Command): void {
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
    .action(lazy(() => import("../simulate.ts")));
  examples(command, [
    "flagtrail simulate --port 4010 --seed 7 --records 20000 --days 180",
    "flagtrail simulate --rate-limit --error-rate 0.05 --latency 50",
    "FLAGTRAIL_API_KEY=console-simulator-key flagtrail sync --base-url http://127.0.0.1:4010",
  ]);
}
