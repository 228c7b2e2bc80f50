// When the simulated team works: an activity weight per hour of the history (working hours on
// weekdays, a trickle at night, quiet weekends), and the instant at any quantile of that activity. The
// generator spreads its records over these quantiles, so a day's count follows the rhythm and no day
// is left empty unless the history is too small to reach it.

import type { Prng } from "../prng.ts";

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;

/** Relative activity per local hour (0–23) of a working day: mornings, a lunch dip, few late hours. */
const HOURS = [
  0.02, 0.01, 0.01, 0.01, 0.01, 0.02, 0.05, 0.2, 0.6, 1, 1, 1, 0.6, 0.9, 1, 1, 0.9, 0.6, 0.3, 0.15, 0.1, 0.08,
  0.05, 0.03,
];
/** Relative activity per local weekday (0 = Sunday): weekends are quiet, never silent (on-call, bots). */
const WEEKDAYS = [0.08, 0.95, 1, 1, 1, 0.8, 0.1];
/** Each day's activity is scaled by a factor in [1 - DAY_SPREAD, 1 + DAY_SPREAD]: no two weeks alike. */
const DAY_SPREAD = 0.35;

export class Timeline {
  /** Cumulative weight at the end of each hour bucket of [start, end). */
  private readonly cumulative: Float64Array;
  private cursor = 0;

  /**
   * `offsetMinutes` is the team's zone offset from UTC at an instant (DST included): the team keeps
   * local office hours. Buckets are whole UTC hours from `start` (the last one may be shorter).
   * `prng` draws each local day's factor.
   */
  constructor(
    private readonly start: number,
    private readonly end: number,
    offsetMinutes: (at: number) => number,
    prng: Prng,
  ) {
    const buckets = Math.max(1, Math.ceil((end - start) / HOUR_MS));
    this.cumulative = new Float64Array(buckets);
    let total = 0;
    let day = Number.NaN;
    let dayFactor = 1;
    for (let i = 0; i < buckets; i++) {
      const from = start + i * HOUR_MS;
      const length = Math.min(HOUR_MS, end - from);
      const localMs = from + offsetMinutes(from) * 60_000;
      if (Math.floor(localMs / DAY_MS) !== day) {
        day = Math.floor(localMs / DAY_MS);
        dayFactor = 1 + DAY_SPREAD * (2 * prng.next() - 1);
      }
      const local = new Date(localMs);
      total += HOURS[local.getUTCHours()]! * WEEKDAYS[local.getUTCDay()]! * dayFactor * (length / HOUR_MS);
      this.cumulative[i] = total;
    }
  }

  /** The activity of the whole history in "busy hours" (an hour at full weekday-noon activity is 1). */
  get busyHours(): number {
    return this.cumulative[this.cumulative.length - 1]!;
  }

  /**
   * The instant at quantile `q` ∈ [0, 1) of the activity. Calls must come with non-decreasing `q`: a
   * cursor walks the buckets, so N calls cost O(N + hours) and need no search or sort.
   */
  at(q: number): number {
    const target = q * this.busyHours;
    const last = this.cumulative.length - 1;
    while (this.cursor < last && this.cumulative[this.cursor]! <= target) this.cursor++;
    const before = this.cursor === 0 ? 0 : this.cumulative[this.cursor - 1]!;
    const weight = this.cumulative[this.cursor]! - before;
    const from = this.start + this.cursor * HOUR_MS;
    const length = Math.min(HOUR_MS, this.end - from);
    const within = weight > 0 ? Math.min(1, Math.max(0, (target - before) / weight)) : 0;
    return Math.min(this.end - 1, Math.floor(from + within * length));
  }
}
