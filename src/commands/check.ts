// `flagtrail check`: evaluate the config's controls over a period for every project of the store (or
// --project), keep the findings, print them (table, JSON, JUnit XML) and fail (exit 1) when an unwaived
// one reaches --fail-on. Bad usage or a bad config: exit 2.
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { z } from "zod";
import { resolveDbPath } from "../config.ts";
import { type CheckedProject, checkStore } from "../controls/check.ts";
import { type ControlsConfig, parseControlsConfig, SEVERITIES } from "../controls/config.ts";
import { SEVERITY_RANK } from "../controls/evaluate.ts";
import { CHECK_FORMATS, jsonOutput, junitOutput, tableOutput } from "../controls/output.ts";
import { DEMO_CONFIG_FILE } from "../demo/controls.ts";
import { DEMO_DEFAULTS } from "../demo/defaults.ts";
import {
  FindingsError,
  type FlagtrailError,
  sinkLabel,
  UndeliveredAlertsError,
  UsageError,
} from "../errors.ts";
import { defaultPathAfterDemo } from "../fs/storeFiles.ts";
import { configFileOf, projectNameSchema, readConfigText } from "../projects.ts";
import { resolvePeriod } from "../report/period.ts";
import { signingKeyFromEnv } from "../signingKey.ts";
import { namingFlags, PERIOD_FLAGS, parseOptions, storeOptionsShape } from "./options.ts";

const checkOptionsSchema = z.object({
  ...storeOptionsShape,
  config: z.string().min(1).optional(),
  project: projectNameSchema.optional(),
  from: z.string().optional(),
  to: z.string().optional(),
  format: z.enum(CHECK_FORMATS).default("table"),
  failOn: z.enum(SEVERITIES).default("low"),
  notify: z.boolean().default(false),
});

/**
 * After `npm run demo`, `check` on the demo's store (named, or the one the default's absence points at:
 * src/fs/storeFiles.ts's noStore) needs the demo's config file: named, as noStore names the demo's store.
 */
function demoConfigHint(dbPath: string): string {
  const config = `${DEMO_DEFAULTS.out}/${DEMO_CONFIG_FILE}`;
  const demoStore = resolve(dbPath) === resolve(DEMO_DEFAULTS.db) || defaultPathAfterDemo(dbPath);
  return demoStore && existsSync(config) ? `, or give --config ${config} to check the demo's controls` : "";
}

export function loadControls(configOption: string | undefined, dbPath: string): ControlsConfig {
  const file = configFileOf(configOption);
  if (file === undefined) {
    throw new UsageError(
      "No config file: check reads its controls from flagtrail.config.json (or --config, FLAGTRAIL_CONFIG)" +
        `${demoConfigHint(dbPath)}.`,
    );
  }
  const config = parseControlsConfig(readConfigText(file), file);
  if (config.controls.length === 0) throw new UsageError(`${file} lists no controls to check.`);
  return config;
}

export function givenPeriod(from: string | undefined, to: string | undefined, now: number) {
  if (from === undefined && to === undefined) return null;
  if (from === undefined) throw new UsageError("--to needs --from.");
  const period = namingFlags(PERIOD_FLAGS, () =>
    resolvePeriod(from, to ?? new Date(now).toISOString().slice(0, 10), "UTC"),
  );
  return { start: period.start, end: period.end };
}

const NAMED_CONTROLS = 8;

/**
 * The one sentence of a failed check: unwaived findings at or above --fail-on, and (--notify) alerts
 * left undelivered, which fail the run too: cron and CI see a sink that is down, not only a log line.
 */
function failure(
  projects: readonly CheckedProject[],
  failOn: keyof typeof SEVERITY_RANK,
  undelivered: string | null,
): FlagtrailError | null {
  const findings = projects.flatMap((p) => p.findings);
  const failing = findings.filter(
    (f) => f.waiver === null && SEVERITY_RANK[f.severity] >= SEVERITY_RANK[failOn],
  );
  if (failing.length === 0)
    return undelivered === null ? null : new UndeliveredAlertsError(`${undelivered}.`);
  const controls = [...new Set(failing.map((f) => f.control))];
  // One sentence stays one line: the first controls by name, the rest counted.
  const named =
    controls.length <= NAMED_CONTROLS
      ? controls.join(", ")
      : `${controls.slice(0, NAMED_CONTROLS).join(", ")} and ${controls.length - NAMED_CONTROLS} more`;
  return new FindingsError(
    `${failing.length} unwaived ${failing.length === 1 ? "finding" : "findings"} at or above ${failOn} severity ` +
      `(controls ${named})${undelivered === null ? "" : `, and ${undelivered}`}.`,
  );
}

export async function action(raw: Record<string, unknown>): Promise<void> {
  const options = parseOptions(checkOptionsSchema, raw);
  const dbPath = resolveDbPath(options);
  const config = loadControls(options.config, dbPath);
  const now = Date.now();
  const given = givenPeriod(options.from, options.to, now);
  const notified = { undelivered: null as string | null };
  // The key verify checks the chain head's signature with: the integrity control checks it too.
  const withKey = { ...config, signingKey: signingKeyFromEnv() };
  const checked = await checkStore(dbPath, withKey, given, now, {
    project: options.project,
    afterCheck: options.notify
      ? async (parts) => {
          const { notifyFindings } = await import("../controls/cycle.ts");
          const { undelivered, busy } = await notifyFindings(parts, config.sinks);
          notified.undelivered = undelivered;
          // Not a failure: the other run (the daemon, another cron job) is sending those alerts now.
          for (const sink of busy)
            process.stderr.write(
              `Note: ${sinkLabel(sink)} is being delivered by another run; this run left it alone.\n`,
            );
        }
      : undefined,
  });
  const text =
    options.format === "json"
      ? jsonOutput(checked)
      : options.format === "junit"
        ? junitOutput(checked, config.controls, options.failOn)
        : tableOutput(checked, config.controls);
  process.stdout.write(text);
  const failed = failure(checked, options.failOn, notified.undelivered);
  if (failed) throw failed;
}
