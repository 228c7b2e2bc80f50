// Leases keep one sync (and one daemon) per database. SQLite: the row, in IMMEDIATE transactions (never two
// winners), taken once expired or its process is gone from this host. PostgreSQL, across machines: advisory
// lock on its own session (pg/leaseLocks.ts), gone with a dead holder's; the row tells `status` who holds it.
import { DatabaseBusyError, LockedError } from "../errors.ts";
import { holderGone } from "../holders.ts";
import { type AnyStore, pgSide } from "./openAny.ts";
import { inTransaction, onStore, type Queries, queriesOf, type SQL, sql } from "./query.ts";

export interface Lease {
  name: string;
  holder: string;
  pid: number;
  acquiredAt: number;
  expiresAt: number;
}

function isStale(lease: Lease, now: number = Date.now()): boolean {
  return lease.expiresAt <= now || holderGone(lease.holder, lease.pid);
}

const leaseRows = (tail: SQL): SQL =>
  sql`SELECT name, holder, pid, acquired_at AS "acquiredAt", expires_at AS "expiresAt" FROM leases ${tail}`;

async function readRow(q: Queries, name: string): Promise<Lease | undefined> {
  return q.get<Lease>(leaseRows(sql`WHERE name = ${name}`));
}

const upsertLease = (l: Lease): SQL =>
  sql`INSERT INTO leases (name, holder, pid, acquired_at, expires_at)
    VALUES (${l.name}, ${l.holder}, ${l.pid}, ${l.acquiredAt}, ${l.expiresAt})
    ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, pid = excluded.pid,
      acquired_at = excluded.acquired_at, expires_at = excluded.expires_at`;

const deleteLease = (name: string, holder: string): SQL =>
  sql`DELETE FROM leases WHERE name = ${name} AND holder = ${holder}`;

/** Why `name` cannot be taken: SQLite's lease ends at its expiry, PostgreSQL's with its holder's session. */
function refusal(store: AnyStore, name: string, current: Lease | undefined): LockedError {
  const host = current?.holder.split("/")[0];
  const who = !current
    ? ""
    : store.engine === "sqlite"
      ? ` (process ${current.pid}, ${host}), held until ${new Date(current.expiresAt).toISOString()}`
      : ` (process ${current.pid}, ${host}, since ${new Date(current.acquiredAt).toISOString()})`;
  return new LockedError(`Another ${name} is running on this database${who}. Wait for it to finish.`);
}

const lost = (name: string) => new LockedError(`The ${name} lease was lost to another process.`);

/** Takes lease `name` for `ttlMs`, or throws LockedError naming who holds it. */
export async function acquireLease(
  store: AnyStore,
  name: string,
  holder: string,
  ttlMs: number,
  now: number = Date.now(),
) {
  const lease: Lease = { name, holder, pid: process.pid, acquiredAt: now, expiresAt: now + ttlMs };
  // tookOver: the stale lease taken over (its holder died or let it expire).
  const taken = (previous: Lease | undefined) =>
    previous && previous.holder !== holder ? { lease, tookOver: previous } : { lease };
  if (store.engine === "postgres") {
    // The lock decides; a row left by a holder whose session is gone is one that died holding it.
    const locks = await pgSide();
    const lock = await locks.lockLease(store, name, holder);
    const q = await queriesOf(store);
    if (lock === "refused") throw refusal(store, name, await readRow(q, name));
    try {
      const previous = await readRow(q, name);
      await q.run(upsertLease(lease));
      return taken(previous);
    } catch (error) {
      if (lock === "taken") await locks.unlockLease(store, name);
      throw error;
    }
  }
  try {
    return await inTransaction(store, async (q) => {
      const current = await readRow(q, name);
      if (current && current.holder !== holder && !isStale(current, now)) throw refusal(store, name, current);
      await q.run(upsertLease(lease));
      return taken(current);
    });
  } catch (error) {
    // Another process kept the write lock past the busy timeout: the database is in use, not broken.
    if ((error as { code?: unknown }).code === "SQLITE_BUSY") {
      throw new DatabaseBusyError(
        `The database is busy: another process kept it locked for too long while taking the ${name} lease. Try again.`,
        { cause: error },
      );
    }
    throw error;
  }
}

/** Extends a held lease. Throws LockedError when it was lost (expired and taken by someone else, or its session gone). */
export async function renewLease(
  store: AnyStore,
  name: string,
  holder: string,
  ttlMs: number,
  now: number = Date.now(),
): Promise<Lease> {
  if (store.engine === "postgres" && !(await (await pgSide()).leaseLockHeld(store, name, holder))) {
    throw lost(name);
  }
  return inTransaction(store, async (q) => {
    const changed = await q.run(
      sql`UPDATE leases SET expires_at = ${now + ttlMs} WHERE name = ${name} AND holder = ${holder}`,
    );
    const lease = changed === 0 ? undefined : await readRow(q, name);
    if (!lease) throw lost(name);
    return lease;
  });
}

/** Gives the lease back (and on PostgreSQL its lock); a lease held by someone else is left alone. Returns whether it was held. */
export async function releaseLease(store: AnyStore, name: string, holder: string): Promise<boolean> {
  if (store.engine === "sqlite") return (await (await queriesOf(store)).run(deleteLease(name, holder))) > 0;
  const locks = await pgSide();
  if (!locks.holdsLeaseLock(store, name, holder)) return false;
  try {
    await (await queriesOf(store)).run(deleteLease(name, holder));
  } finally {
    await locks.unlockLease(store, name);
  }
  return true;
}

export const readLease = onStore(readRow);

/** A lease and whether its holder is alive (for status): by pid and expiry on SQLite, by its lock on PostgreSQL. */
const liveOf = async (store: AnyStore, lease: Lease) => ({
  lease,
  live: store.engine === "sqlite" ? !isStale(lease) : await (await pgSide()).leaseLockLive(store, lease.name),
});

/** Every lease (sync, daemon, each sink's `deliver:<sink>`), in name order, with whether its holder is alive. */
export async function readLiveLeases(store: AnyStore) {
  const rows = await (await queriesOf(store)).all<Lease>(leaseRows(sql`ORDER BY name COLLATE "binary"`));
  return Promise.all(rows.map((lease) => liveOf(store, lease)));
}

/** The lease a `flagtrail daemon` holds for its whole life (one worker per database). */
export const DAEMON_LEASE = "daemon";

/** meta key under which the daemon keeps its last cycle's outcome (sync and report), for status. */
export const DAEMON_LAST_CYCLE_KEY = "daemon.last_cycle";
