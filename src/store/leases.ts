// Leases keep one sync (and one daemon) per database. A lease row names its holder and pid and
// expires unless renewed; an expired lease, or one whose process is gone from this host, can be taken.
// Each operation is one IMMEDIATE transaction, so two processes can never both win.

import { hostname } from "node:os";
import { LockedError } from "../errors.ts";
import { sqliteOf } from "./connection.ts";
import type { Store } from "./open.ts";

export interface Lease {
  name: string;
  holder: string;
  pid: number;
  acquiredAt: number;
  expiresAt: number;
}

interface LeaseRow {
  name: string;
  holder: string;
  pid: number;
  acquired_at: number;
  expires_at: number;
}

/**
 * A holder id for this process: `host/pid/role`. The host part lets a later process on the same host
 * see that a crashed holder's pid is gone; holders from other hosts are only freed by expiry.
 */
export function leaseHolder(role: string, pid: number = process.pid): string {
  return `${hostname()}/${pid}/${role}`;
}

function holderHost(holder: string): string | undefined {
  const slash = holder.indexOf("/");
  return slash > 0 ? holder.slice(0, slash) : undefined;
}

/** True when `pid` names a live process on this host (EPERM still means it exists). */
function pidIsAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

function isStale(row: LeaseRow, now: number): boolean {
  if (row.expires_at <= now) return true;
  if (holderHost(row.holder) === hostname() && row.pid !== process.pid) return !pidIsAlive(row.pid);
  return false;
}

function toLease(row: LeaseRow): Lease {
  return {
    name: row.name,
    holder: row.holder,
    pid: row.pid,
    acquiredAt: row.acquired_at,
    expiresAt: row.expires_at,
  };
}

export interface AcquireResult {
  lease: Lease;
  /** The stale lease that was taken over, if any: its holder died or let it expire. */
  tookOver?: Lease;
}

/** Takes lease `name` for `ttlMs`, or throws LockedError naming who holds it. */
export function acquireLease(
  store: Store,
  name: string,
  holder: string,
  ttlMs: number,
  now: number = Date.now(),
): AcquireResult {
  const sqlite = sqliteOf(store);
  const select = sqlite.prepare<[string], LeaseRow>("SELECT * FROM leases WHERE name = ?");
  const upsert = sqlite.prepare(
    `INSERT INTO leases (name, holder, pid, acquired_at, expires_at) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT(name) DO UPDATE SET holder = excluded.holder, pid = excluded.pid,
       acquired_at = excluded.acquired_at, expires_at = excluded.expires_at`,
  );
  const take = sqlite.transaction((): AcquireResult => {
    const current = select.get(name);
    if (current && current.holder !== holder && !isStale(current, now)) {
      throw new LockedError(
        `Another ${name} is running on this database (process ${current.pid}, ${current.holder.split("/")[0]}), ` +
          `held until ${new Date(current.expires_at).toISOString()}. Wait for it to finish.`,
      );
    }
    upsert.run(name, holder, process.pid, now, now + ttlMs);
    const lease: Lease = { name, holder, pid: process.pid, acquiredAt: now, expiresAt: now + ttlMs };
    return current && current.holder !== holder ? { lease, tookOver: toLease(current) } : { lease };
  });
  try {
    return take.immediate();
  } catch (error) {
    // Another process kept the write lock past the busy timeout: the database is in use, not broken.
    if ((error as { code?: unknown }).code === "SQLITE_BUSY") {
      throw new LockedError(
        `The database is busy: another process kept it locked for too long while taking the ${name} lease. Try again.`,
        { cause: error },
      );
    }
    throw error;
  }
}

/** Extends a held lease. Throws LockedError when it was lost (expired and taken by someone else). */
export function renewLease(
  store: Store,
  name: string,
  holder: string,
  ttlMs: number,
  now: number = Date.now(),
): Lease {
  const renew = sqliteOf(store).transaction((): Lease => {
    const changed = sqliteOf(store)
      .prepare("UPDATE leases SET expires_at = ? WHERE name = ? AND holder = ?")
      .run(now + ttlMs, name, holder).changes;
    if (changed === 0) throw new LockedError(`The ${name} lease was lost to another process.`);
    const row = sqliteOf(store).prepare<[string], LeaseRow>("SELECT * FROM leases WHERE name = ?").get(name);
    if (!row) throw new LockedError(`The ${name} lease was lost to another process.`);
    return toLease(row);
  });
  return renew.immediate();
}

/** Gives the lease back; a lease held by someone else is left alone. Returns whether it was held. */
export function releaseLease(store: Store, name: string, holder: string): boolean {
  const release = sqliteOf(store).transaction(
    () =>
      sqliteOf(store).prepare("DELETE FROM leases WHERE name = ? AND holder = ?").run(name, holder).changes >
      0,
  );
  return release.immediate();
}

/** The current lease row, if any (for status). */
/** Whether a lease is held by a live holder: not expired, and its process alive when it is on this host. */
export function leaseIsLive(lease: Lease, now: number = Date.now()): boolean {
  return !isStale(
    {
      name: lease.name,
      holder: lease.holder,
      pid: lease.pid,
      acquired_at: lease.acquiredAt,
      expires_at: lease.expiresAt,
    },
    now,
  );
}

export function readLease(store: Store, name: string): Lease | undefined {
  const row = sqliteOf(store).prepare<[string], LeaseRow>("SELECT * FROM leases WHERE name = ?").get(name);
  return row ? toLease(row) : undefined;
}

/** The lease a `flagtrail daemon` holds for its whole life (one worker per database). */
export const DAEMON_LEASE = "daemon";

/** meta key under which the daemon keeps its last cycle's outcome (sync and report), for status. */
export const DAEMON_LAST_CYCLE_KEY = "daemon.last_cycle";
