// The sync engine's defaults, in a module of their own: `--help` shows them, and the CLI loads its help
// at every start without loading the engine.
export const SYNC_DEFAULTS = {
  /** Asked of a server whose page size is not known yet; what it grants is remembered. */
  preferredPageSize: 1000,
  /** What the API documents as its default `limit`: the fallback when a larger one is refused. */
  fallbackPageSize: 100,
  /** Requests in flight at once. */
  concurrency: 4,
  /**
   * The entity pass's request budget, when none is given: as many requests as the run's audit part made
   * (so a first sync's entity reads cost no more than its pages), but at least this many, so that a
   * nightly run of a busy project (~35 entities edited per 250 records in the simulator) keeps up.
   */
  entityBudgetFloor: 50,
  /** The share of the documented rate limits a run uses: the project's other API clients keep the rest. */
  rateShare: 0.5,
  lookbackDays: 2,
  windowDays: 30,
  /** First run without a start day: this many days back from the end day. */
  backfillDays: 90,
  leaseTtlMs: 60_000,
  /**
   * A write transaction holds at most this many records… (a PostgreSQL batch costs its round trips and
   * commit whatever its size: a 50k first sync took 4.61-4.69 s at 6,000 against 4.89-5.14 s at 2,000, 3 pairs)
   */
  batchRecords: 5_000,
  /** …or the pages fetched in this many milliseconds, whichever comes first. */
  batchMs: 2_000,
} as const;
