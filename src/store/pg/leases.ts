// Leases on PostgreSQL: the lease is a session-level advisory lock held by a dedicated connection, so
// the server itself guarantees one holder across machines, and a holder that dies (kill -9, lost host)
// loses it with its session, with no expiry to wait for. The `leases` row only tells `status` who holds
// it and since when; whether it is held is read from pg_locks.
import { createHash } from "node:crypto";
import { and, eq } from "drizzle-orm";
import type { PoolClient } from "pg";
import { LockedError } from "../../errors.ts";
import type { AcquireResult, Lease } from "../leases.ts";
import { type PgStore, pgConnectionOf } from "./connection.ts";
import { describePgError } from "./errors.ts";
import { leases } from "./schema.ts";

/** The advisory-lock namespace (first key) of flagtrail's leases; the second key comes from the name. */
export const LEASE_LOCK_CLASS = 0x46_54_4c_01;

/**
 * A lease name's second lock key: computed here rather than by the server, so every version agrees. A
 * project in its own schema locks `schema/name`: advisory locks are per database, leases per project.
 */
function lockKey(store: PgStore, name: string): number {
  const namespace = pgConnectionOf(store).namespace;
  return createHash("sha256")
    .update(namespace === null ? name : `${namespace}/${name}`)
    .digest()
    .readInt32BE(0);
}

/** A lease row as `status` shows it, with whether a live session holds its lock right now. */
export interface PgLease extends Lease {
  live: boolean;
}

async function rowOf(store: PgStore, name: string): Promise<Lease | undefined> {
  const [row] = await pgConnectionOf(store).db.select().from(leases).where(eq(leases.name, name));
  return row;
}

function refusal(name: string, current: Lease | undefined): LockedError {
  const who = current
    ? ` (process ${current.pid}, ${current.holder.split("/")[0]}, since ${new Date(current.acquiredAt).toISOString()})`
    : "";
  return new LockedError(`Another ${name} is running on this database${who}. Wait for it to finish.`);
}

/**
 * Takes lease `name`, or throws LockedError naming who holds it. `ttlMs` only sets the row's expires_at
 * (renewLease moves it on), kept for status and for symmetry with SQLite: the lock decides.
 */
export async function acquirePgLease(
  store: PgStore,
  name: string,
  holder: string,
  ttlMs: number,
  now: number = Date.now(),
): Promise<AcquireResult> {
  const connection = pgConnectionOf(store);
  const mine = connection.leases.get(name);
  if (mine?.holder === holder) return { lease: await renewHeld(store, name, holder, now, now + ttlMs) };
  if (mine) throw refusal(name, await rowOf(store, name));
  const client = await connection.pool.connect().catch((error: unknown) => {
    throw describePgError(error, connection.url);
  });
  // The session died while idle (server restart, network, terminated): its lock went with it. Forget the
  // lease, so that renewing says it was lost; an unhandled 'error' here would crash the process.
  client.on("error", () => forget(store, name, client));
  try {
    const locked = await client.query<{ locked: boolean }>("SELECT pg_try_advisory_lock($1, $2) AS locked", [
      LEASE_LOCK_CLASS,
      lockKey(store, name),
    ]);
    if (!locked.rows[0]?.locked) throw refusal(name, await rowOf(store, name));
    const previous = await rowOf(store, name);
    const lease: Lease = { name, holder, pid: process.pid, acquiredAt: now, expiresAt: now + ttlMs };
    await connection.db
      .insert(leases)
      .values(lease)
      .onConflictDoUpdate({
        target: leases.name,
        set: { holder, pid: lease.pid, acquiredAt: now, expiresAt: lease.expiresAt },
      });
    connection.leases.set(name, { holder, client });
    // A row left by a holder whose session is gone: it died without giving the lease back.
    return previous && previous.holder !== holder ? { lease, tookOver: previous } : { lease };
  } catch (error) {
    // Closing the session drops any lock it took: nothing is left held on a failure.
    client.release(true);
    throw error instanceof LockedError ? error : describePgError(error, connection.url);
  }
}

/** Drops a held lease's session (which frees its lock), once, if `client` still holds lease `name`. */
function forget(store: PgStore, name: string, client: PoolClient): void {
  const connection = pgConnectionOf(store);
  if (connection.leases.get(name)?.client !== client) return;
  connection.leases.delete(name);
  client.release(true);
}

/** Updates the row of a lease this process holds; throws LockedError when the row is gone. */
async function renewHeld(
  store: PgStore,
  name: string,
  holder: string,
  acquiredAt: number | undefined,
  expiresAt: number,
): Promise<Lease> {
  const [row] = await pgConnectionOf(store)
    .db.update(leases)
    .set(acquiredAt === undefined ? { expiresAt } : { acquiredAt, expiresAt })
    .where(and(eq(leases.name, name), eq(leases.holder, holder)))
    .returning();
  if (!row) throw new LockedError(`The ${name} lease was lost to another process.`);
  return row;
}

/** Moves a held lease's expires_at on. Throws LockedError when its session (and so the lock) is gone. */
export async function renewPgLease(
  store: PgStore,
  name: string,
  holder: string,
  ttlMs: number,
  now: number = Date.now(),
): Promise<Lease> {
  const connection = pgConnectionOf(store);
  const held = connection.leases.get(name);
  const lost = new LockedError(`The ${name} lease was lost to another process.`);
  if (!held || held.holder !== holder) throw lost;
  try {
    await held.client.query("SELECT 1");
  } catch {
    forget(store, name, held.client);
    throw lost;
  }
  return await renewHeld(store, name, holder, undefined, now + ttlMs);
}

/** Gives the lease back (row and lock); returns whether this process held it. */
export async function releasePgLease(store: PgStore, name: string, holder: string): Promise<boolean> {
  const connection = pgConnectionOf(store);
  const held = connection.leases.get(name);
  if (!held || held.holder !== holder) return false;
  try {
    await connection.db.delete(leases).where(and(eq(leases.name, name), eq(leases.holder, holder)));
    // Unlocked by the server before we return: ending the session alone frees the lock only once the
    // server has noticed, and a next holder asking at once would be refused.
    await held.client.query("SELECT pg_advisory_unlock($1, $2)", [LEASE_LOCK_CLASS, lockKey(store, name)]);
  } finally {
    // Ending the session frees the lock too, even if the statements above failed.
    forget(store, name, held.client);
  }
  return true;
}

/** The lease row, if any, and whether some session holds its lock now (for status). */
export async function readPgLease(store: PgStore, name: string): Promise<PgLease | undefined> {
  const row = await rowOf(store, name);
  if (!row) return undefined;
  const held = await pgConnectionOf(store).pool.query<{ live: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND granted
       AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
       AND classid = $1::bigint::oid AND objid = ($2::bigint & 4294967295)::oid AND objsubid = 2) AS live`,
    [LEASE_LOCK_CLASS, lockKey(store, name)],
  );
  return { ...row, live: held.rows[0]?.live ?? false };
}
