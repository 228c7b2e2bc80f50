// Who holds a lease (src/store/leases.ts): a holder id names its host and process, so that a later
// process on the same host can tell that a crashed holder is gone. No database: whether a process is
// alive is the operating system's to say.
import { hostname } from "node:os";

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

/** True when `pid` names a live process on this host (EPERM still means it exists, as another user's). */
export function pidIsAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Whether `holder`'s process `pid` is known to be gone: another process of this host that no longer runs. */
export function holderGone(holder: string, pid: number): boolean {
  return holderHost(holder) === hostname() && pid !== process.pid && !pidIsAlive(pid);
}
