// What opening a store refuses, in the same words on both engines (open.ts, pg/open.ts).
import { FlagtrailError } from "../errors.ts";

/** A `--db` pointed by mistake at another application's database: refused, the database left untouched. */
export function foreignStore(where: string, database: string, tables: readonly string[]): FlagtrailError {
  const shown = tables.slice(0, 3).join(", ") + (tables.length > 3 ? ", …" : "");
  return new FlagtrailError(
    `${where} is another application's ${database}${shown ? ` (tables ${shown})` : ""}, not a flagtrail store; it was left untouched.`,
  );
}

/**
 * A read-only open cannot apply migrations, so a store an older flagtrail wrote would fail later on a
 * missing column: say so now, with what to do. Decided by the newest applied migration's time, as
 * drizzle's migrator decides.
 */
export function assertMigrated(where: string, newestApplied: number | null, newestShipped: number): void {
  if (newestApplied === null)
    throw new FlagtrailError(`${where} is not a flagtrail database (no migrations applied).`);
  if (newestApplied < newestShipped) {
    throw new FlagtrailError(
      `${where} was written by an older flagtrail; run \`flagtrail sync\` on it once to upgrade it.`,
    );
  }
}
