// A lease on PostgreSQL beyond its row: a session-level advisory lock on a connection of its own (leases.ts).
import { createHash } from "node:crypto";
import type { PoolClient } from "pg";
import { type PgStore, pgConnectionOf } from "../connection.ts";
import { describePgError, lostConnection } from "./errors.ts";

/** The advisory-lock namespace (first key) of flagtrail's leases; the second key comes from the name. */
export const LEASE_LOCK_CLASS = 0x46_54_4c_01;

// A lease name's second lock key, hashed here so every version agrees; a project in its own schema locks
// `schema/name` (advisory locks are per database, leases per project).
function lockKey(store: PgStore, name: string): number {
  const namespace = pgConnectionOf(store).namespace;
  return createHash("sha256")
    .update(namespace === null ? name : `${namespace}/${name}`)
    .digest()
    .readInt32BE(0);
}

// Takes lease `name`'s lock for `holder`: "held" when this process holds it for `holder` already,
// "taken" when it took it now (on a session of its own, kept until unlockLease), "refused" otherwise.
export async function lockLease(store: PgStore, name: string, holder: string) {
  const connection = pgConnectionOf(store);
  const mine = connection.leases.get(name);
  if (mine) return mine.holder === holder ? "held" : "refused";
  const client = await connection.pool.connect().catch((error: unknown) => {
    throw describePgError(error, connection.url);
  });
  // A session dying idle takes its lock: forget the lease (renewing says lost), never crash on 'error'.
  client.on("error", () => forget(store, name, client));
  try {
    const locked = await client.query<{ locked: boolean }>("SELECT pg_try_advisory_lock($1, $2) AS locked", [
      LEASE_LOCK_CLASS,
      lockKey(store, name),
    ]);
    if (!locked.rows[0]?.locked) {
      client.release(true);
      return "refused";
    }
  } catch (error) {
    // Closing the session drops any lock it took: nothing is left held on a failure.
    client.release(true);
    throw describePgError(error, connection.url);
  }
  connection.leases.set(name, { holder, client });
  return "taken";
}

/** Drops a held lease's session (which frees its lock), once, if `client` still holds lease `name`. */
function forget(store: PgStore, name: string, client: PoolClient): void {
  const connection = pgConnectionOf(store);
  if (connection.leases.get(name)?.client !== client) return;
  connection.leases.delete(name);
  client.release(true);
}

/** Whether this process holds lease `name` for `holder` on a session that still answers. */
export async function leaseLockHeld(store: PgStore, name: string, holder: string): Promise<boolean> {
  const held = pgConnectionOf(store).leases.get(name);
  if (!held || held.holder !== holder) return false;
  try {
    await held.client.query("SELECT 1");
    return true;
  } catch {
    forget(store, name, held.client);
    return false;
  }
}

/** Whether this process holds lease `name` for `holder` (without asking the server). */
export function holdsLeaseLock(store: PgStore, name: string, holder: string): boolean {
  return pgConnectionOf(store).leases.get(name)?.holder === holder;
}

export async function unlockLease(store: PgStore, name: string): Promise<void> {
  const held = pgConnectionOf(store).leases.get(name);
  if (!held) return;
  try {
    // Ending the session alone frees the lock only once the server notices: a next holder would be refused.
    await held.client.query("SELECT pg_advisory_unlock($1, $2)", [LEASE_LOCK_CLASS, lockKey(store, name)]);
  } catch (error) {
    // A session the server ended took its lock with it: released already (and the command's own error,
    // the lost connection, is the one to tell).
    if (!lostConnection(error)) throw describePgError(error, pgConnectionOf(store).url);
  } finally {
    forget(store, name, held.client);
  }
}

/** Whether some session holds lease `name`'s lock now (for status). */
export async function leaseLockLive(store: PgStore, name: string): Promise<boolean> {
  const held = await pgConnectionOf(store).pool.query<{ live: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND granted
       AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
       AND classid = $1::bigint::oid AND objid = ($2::bigint & 4294967295)::oid AND objsubid = 2) AS live`,
    [LEASE_LOCK_CLASS, lockKey(store, name)],
  );
  return held.rows[0]?.live ?? false;
}
