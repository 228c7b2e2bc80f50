// The demo: the whole job on the embedded simulator. Start a seeded simulator on a free loopback port,
// sync its history (longer than the API's default 90 days) into a local store, write the last complete
// month's reports, and say what happened. Run again, it syncs incrementally.
//
// The simulated world must be the same on every run, or a re-run would see the same ids with other
// content (mutations). So the history is anchored at the start of the UTC day of the first run (kept in
// the store's meta table with the world's seed and size), and the activity "since then" is a
// deterministic stream of records after the anchor: every run serves the same past, plus whatever has
// "happened" since. The day's start, not the run's instant: the seeded history then ends at the same
// place whatever the time of day, so the month reported has the same records and numbers all day (an
// instant moved the month's window over the history by the hour). Nothing is dated in the future: the
// history ends at midnight, and the live records between midnight and now are all in the past.

import { createHash } from "node:crypto";
import { z } from "zod";
import { DEFAULT_AUTH_HEADER } from "../api/connection.ts";
import { lastCompleteMonth } from "../daemon/periods.ts";
import { FlagtrailError, SettingError } from "../errors.ts";
import { type ReportResult, writeReports } from "../report/writeReports.ts";
import { signingKeyFromEnv } from "../signingKey.ts";
import type { AppendInput } from "../simulator/index.ts";
import { startSimulator } from "../simulator/index.ts";
import { openStore, readCheckpoint, readMetaValue, type Store, writeMetaValue } from "../store/syncStore.ts";
import { createSyncClient } from "../sync/client.ts";
import { addDays, todayUtc } from "../sync/days.ts";
import { filterKeyFor } from "../sync/plan.ts";
import { runSync, type SyncSummary } from "../sync/runSync.ts";
import { checkDemoControls, type DemoControls, demoControlsConfig } from "./controls.ts";

const WORLD_KEY = "demo.world";
// Live activity: busy from the anchor until a day after the first run (a re-run a minute later has
// something new), calmer afterwards; bounded so that a demo database years old still starts quickly.
const LIVE_BUSY_STEP_MS = 45_000;
const LIVE_BUSY_SPAN_MS = 86_400_000;
const LIVE_CALM_STEP_MS = 600_000;
const MAX_LIVE_RECORDS = 100_000;
const DEMO_API_KEY = "console-demo-simulator-key";
const DAY_MS = 86_400_000;

export interface DemoOptions {
  dbPath: string;
  outDir: string;
  seed: number;
  records: number;
  days: number;
  now?: number;
  onProgress?: (line: string) => void;
}

export interface DemoResult {
  /** Where the store is, safe to print (a PostgreSQL URL's password masked). */
  location: string;
  simulatorUrl: string;
  anchor: number;
  incremental: boolean;
  liveRecords: number;
  simulatorRecords: number;
  sync: SyncSummary;
  report: ReportResult;
  controls: DemoControls;
}

export async function runDemo(options: DemoOptions): Promise<DemoResult> {
  const now = options.now ?? Date.now();
  const say = options.onProgress ?? (() => {});
  const store = await openStore(options.dbPath);
  try {
    const { anchor, firstRun } = await readOrCreateWorld(store, options, now);
    const sim = await startSimulator({
      host: "127.0.0.1",
      port: 0,
      apiKey: DEMO_API_KEY,
      seed: options.seed,
      records: options.records,
      days: options.days,
      now: anchor,
    });
    try {
      // Worlds made before firstRun was kept were anchored at their first run.
      const live = liveActivity(anchor, (firstRun ?? anchor) + LIVE_BUSY_SPAN_MS, now);
      sim.control.append(live);
      sim.control.advanceClock(Math.max(0, now - anchor));
      say(
        // --records is the seeded history's size; the live records come on top (a total alone read as a
        // --records that was not taken).
        `Simulator on ${sim.url}: ${sim.control.size() - live.length} audit records over the ${options.days} days` +
          ` before ${todayUtc(anchor)} (UTC) and ${live.length} since (seed ${options.seed}, server zone ${sim.settings.timeZone}).`,
      );

      const incremental = (await readCheckpoint(store, filterKeyFor([]))) !== undefined;
      const client = createSyncClient(
        { baseUrl: sim.url, apiKey: DEMO_API_KEY, authHeader: DEFAULT_AUTH_HEADER },
        // The embedded simulator does not throttle: lift the client's budget so the demo stays quick.
        { rateLimits: [{ limit: 100_000, windowMs: 1_000 }] },
      );
      let sync: SyncSummary;
      try {
        say(
          incremental
            ? "Incremental sync: this database has a checkpoint, fetching only what is new."
            : "First run: backfilling the whole history.",
        );
        sync = await runSync(store, client, {
          // A first run reads the whole simulated history; later runs start from the checkpoint.
          since: incremental ? undefined : addDays(todayUtc(anchor), -(options.days + 1)),
          until: todayUtc(now),
          pageSize: 500,
          concurrency: 2,
          // The simulator is local and shares no limits: the whole entity history in this run, so the
          // report shows it complete (a real first sync spends a budget and leaves a backlog).
          entityBudget: null,
          now: () => Date.now(),
          signingKey: signingKeyFromEnv(),
        });
      } finally {
        await client.close();
      }

      const month = lastCompleteMonth(todayUtc(now));
      // The report is written with the demo's controls: its Controls section counts what the check below
      // prints, and its self-approvals say how they relate to the no-self-approval control's count.
      const demoConfig = demoControlsConfig(options.outDir);
      const report = await writeReports({
        store,
        from: month.from,
        to: month.to,
        timeZone: "UTC",
        outDir: options.outDir,
        // The HTML page is what a newcomer opens first; the Markdown and CSVs come with it.
        formats: ["csv", "md", "html"],
        // Running the demo again refreshes its own reports (the manifest lists what it replaced).
        force: true,
        signingKey: signingKeyFromEnv(),
        controls: demoConfig.config.controls,
      });
      const controls = await checkDemoControls(options.dbPath, demoConfig, report.period, Date.now());
      return {
        location: store.location,
        simulatorUrl: sim.url,
        anchor,
        incremental,
        liveRecords: live.length,
        simulatorRecords: sim.control.size(),
        sync,
        report,
        controls,
      };
    } finally {
      await sim.close();
    }
  } finally {
    await store.close();
  }
}

const demoWorldSchema = z.object({
  anchor: z.number().int(),
  /** When the world was made (whole seconds); absent in worlds anchored at that instant. */
  firstRun: z.number().int().optional(),
  seed: z.number().int(),
  records: z.number().int(),
  days: z.number().int(),
});
type DemoWorld = z.infer<typeof demoWorldSchema>;

/** The demo world a store was made with, as its size is asked for. */
export type WorldSize = Pick<DemoWorld, "seed" | "records" | "days">;

/**
 * The store holds another demo world than the one asked for. Names the settings, not the flags (the
 * demo command words it with its flags); carries the stored world's values to pass instead.
 */
export class DemoWorldError extends SettingError {
  constructor(
    readonly location: string,
    readonly world: WorldSize,
  ) {
    super(
      "demo world",
      `${location} holds the demo world of seed ${world.seed}, ${world.records} records and ${world.days} days; ` +
        "run the demo with the same seed, records and days, or on another store for a new world.",
    );
  }
}

/**
 * The world this database was filled from. A re-run with another seed, size or span would serve the
 * same ids with other content, so it is refused rather than mixed into the store.
 */
async function readOrCreateWorld(store: Store, options: DemoOptions, now: number): Promise<DemoWorld> {
  const stored = await readMetaValue(store, WORLD_KEY);
  if (stored !== undefined) {
    const parsed = demoWorldSchema.safeParse(safeJson(stored));
    if (!parsed.success)
      throw new FlagtrailError(`${store.location} holds an unreadable demo world (${WORLD_KEY}).`);
    const world = parsed.data;
    if (world.seed !== options.seed || world.records !== options.records || world.days !== options.days) {
      throw new DemoWorldError(store.location, world);
    }
    return world;
  }
  const world = {
    anchor: Math.floor(now / DAY_MS) * DAY_MS,
    firstRun: Math.floor(now / 1000) * 1000,
    seed: options.seed,
    records: options.records,
    days: options.days,
  };
  await writeMetaValue(store, WORLD_KEY, JSON.stringify(world), now);
  return world;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

const LIVE_ACTIONS = [
  { actionType: "config_default_value_update", changeLog: "Updated default value", name: "checkout_flow" },
  { actionType: "gate_update", changeLog: "Updated gate description", name: "new_onboarding" },
  { actionType: "experiment_edit", changeLog: "Edited experiment hypothesis", name: "pricing_page_test" },
  { actionType: "user_login", changeLog: "Logged in", name: "console" },
] as const;

const LIVE_ACTOR = { id: "demoLiveUser000000001", name: "Dana Live", email: "dana.live@example.com" };

/** The deterministic records "created" after the anchor: the same ones on every run. */
function liveActivity(anchor: number, busyUntil: number, now: number): AppendInput[] {
  const entries: AppendInput[] = [];
  let at = anchor;
  for (let k = 1; k <= MAX_LIVE_RECORDS; k++) {
    at += at < busyUntil ? LIVE_BUSY_STEP_MS : LIVE_CALM_STEP_MS;
    if (at > now) break;
    const action = LIVE_ACTIONS[k % LIVE_ACTIONS.length]!;
    entries.push({ id: demoId(anchor, k), at, ...action, actor: LIVE_ACTOR });
  }
  return entries;
}

const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/** A 22-character alphanumeric id, like the service's, derived from the anchor and the index. */
function demoId(anchor: number, k: number): string {
  const digest = createHash("sha256").update(`flagtrail-demo:${anchor}:${k}`).digest();
  let id = "";
  for (let i = 0; i < 22; i++) id += ALPHABET[digest[i]! % ALPHABET.length];
  return id;
}
