// A project's control writes one at a time: a check numbers its row max(id) + 1 and inserts the findings it
// read as new, a waiver takes seq max + 1. Under PostgreSQL's READ COMMITTED two at once read the same and
// the second fails on the key; SQLite's BEGIN IMMEDIATE already serialises writers.
import { type Queries, sql } from "../query.ts";

/** The advisory-lock namespace (first key) of control writes; leases have 0x46544c01 (pg/leaseLocks.ts). */
const CONTROL_WRITES_LOCK_CLASS = 0x46_54_4c_02;

/** Waits for the project's control-write lock, held until transaction `q` ends (SQLite: nothing to do). */
export async function lockControlWrites(q: Queries): Promise<void> {
  if (q.dialect !== "postgres") return;
  // Advisory locks are per database: the second key is the project's schema (its search_path), hashed.
  const project = sql`('x' || left(md5(current_schema()), 8))::bit(32)::int`;
  await q.run(sql`SELECT pg_advisory_xact_lock(${sql.raw(String(CONTROL_WRITES_LOCK_CLASS))}, ${project})`);
}
