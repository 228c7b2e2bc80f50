// The sync engine's defaults, in a module of their own: `--help` shows them, and the CLI loads its help
// at every start without loading the engine.
export const SYNC_DEFAULTS = {
  pageSize: 100,
  concurrency: 2,
  lookbackDays: 2,
  windowDays: 30,
  /** First run without --since: this many days back from --until. */
  backfillDays: 90,
  leaseTtlMs: 60_000,
} as const;
