// `flagtrail status`'s object: the rows src/store/status.ts reads, as the status printed (as JSON, or as
// text by statusText.ts): times as ISO text, only live leases, each quarantined record's first issue.
import { z } from "zod";
import { DELIVERY_LEASE_PREFIX } from "../controls/sinkLease.ts";
import { readStateBeforeWrite } from "../store/chainRead.ts";
import type { EntityBacklogRow } from "../store/entityBacklog.ts";
import { DAEMON_LEASE } from "../store/leases.ts";
import type { AnyStore } from "../store/openAny.ts";
import { type DayRow, readStatusRows, type StatusRows } from "../store/status.ts";
import type { RunCounters } from "../store/syncRuns.ts";

export interface StoreStatus {
  database: string;
  records: {
    total: number;
    firstOccurredAt: string | null;
    lastOccurredAt: string | null;
    firstServerDay: string | null;
    lastServerDay: string | null;
    /** Records whose date/time could not be parsed (occurred_at NULL). */
    undated: number;
  };
  /**
   * The last record, and the head's HMAC signature as meta holds it (never the key): whether there is one,
   * and the seq it was made over (null: none, or signed by a flagtrail before chain:head_signed_seq).
   */
  chainHead: { seq: number; hash: string | null; signed: boolean; signedSeq: number | null };
  checkpoints: { filterKey: string; latestId: string; latestOccurredAt: string | null; updatedAt: string }[];
  /** Plans of interrupted runs that the next sync of that filter set resumes. */
  pending: { filterKey: string; since: string; until: string; windowsDone: number; windowsTotal: number }[];
  runningLease: { holder: string; pid: number; since: string; expiresAt: string } | null;
  /** A live `flagtrail daemon` on this database, and the outcome of its last cycle (sync + report). */
  daemon: {
    lease: { holder: string; pid: number; expiresAt: string } | null;
    lastCycle: Record<string, unknown> | null;
  };
  /**
   * Each sink's delivery lease (`deliver:<sink>`): held while a run delivers to it, when another run then
   * skips the sink; `live` false when its holder is gone (killed), the next delivery then takes it over.
   */
  deliveries: {
    sink: string;
    holder: string;
    pid: number;
    since: string;
    expiresAt: string;
    live: boolean;
  }[];
  runs: (RunCounters & {
    id: number;
    startedAt: string;
    finishedAt: string | null;
    outcome: string;
    filterKey: string;
    error: string | null;
  })[];
  coverage: {
    daysChecked: number;
    daysWithGaps: number;
    gaps: { filterKey: string; day: string; local: number; server: number }[];
    /** Days checked before the server's day ended: not final, the next sync checks them again. */
    daysOpen: number;
    open: { filterKey: string; day: string; local: number; server: number }[];
  };
  quarantined: { total: number; recent: { recordId: string | null; receivedAt: string; issue: string }[] };
  mutated: { records: number; revisions: number; recent: { id: string; revisions: number }[] };
  /** Per kind of entity read, as of the last entity pass: entities known, and how many are pending. */
  entityHistory: EntityBacklogRow[];
}

/** What the store holds, read from either engine. */
export async function readStatus(store: AnyStore): Promise<StoreStatus> {
  const status = statusOf(store.location, await readStatusRows(store));
  const { headSignature, signedHead } = await readStateBeforeWrite(store);
  const signed = headSignature !== null;
  return {
    ...status,
    chainHead: { ...status.chainHead, signed, signedSeq: signed ? (signedHead?.seq ?? null) : null },
  };
}

const iso = (ms: number | null | undefined) =>
  ms === null || ms === undefined ? null : new Date(ms).toISOString();

function firstIssue(issuesJson: string): string {
  try {
    const issues = JSON.parse(issuesJson) as { path?: string[]; message?: string }[];
    const first = issues[0];
    if (!first) return "";
    const where = first.path && first.path.length > 0 ? `${first.path.join(".")}: ` : "";
    return `${where}${first.message ?? ""}${issues.length > 1 ? ` (+${issues.length - 1} more)` : ""}`;
  } catch {
    return issuesJson;
  }
}

function statusOf(database: string, rows: StatusRows): StoreStatus {
  const { records, head, runs, coverageCounts, openDays, gaps } = rows;
  // A holder that died (kill -9) is not "running".
  const liveLease = (name: string) => rows.leases.find((l) => l.lease.name === name && l.live)?.lease;
  const lease = liveLease("sync");
  const daemonLease = liveLease(DAEMON_LEASE);
  return {
    database,
    records: {
      total: records.total,
      firstOccurredAt: iso(records.first),
      lastOccurredAt: iso(records.last),
      firstServerDay: records.firstDay,
      lastServerDay: records.lastDay,
      undated: records.undated ?? 0,
    },
    chainHead: { seq: head?.seq ?? 0, hash: head?.chain_hash ?? null, signed: false, signedSeq: null },
    checkpoints: rows.checkpoints.map((c) => ({
      filterKey: c.filterKey,
      latestId: c.latestId,
      latestOccurredAt: iso(c.latestOccurredAt),
      updatedAt: iso(c.updatedAt) ?? "",
    })),
    pending: rows.plans.map(({ plan, windows }) => ({
      filterKey: plan.filterKey,
      since: plan.since,
      until: plan.until,
      windowsDone: windows.filter((w) => w.status === "done").length,
      windowsTotal: windows.length,
    })),
    runningLease: lease
      ? {
          holder: lease.holder,
          pid: lease.pid,
          since: iso(lease.acquiredAt) ?? "",
          expiresAt: iso(lease.expiresAt) ?? "",
        }
      : null,
    daemon: {
      lease: daemonLease
        ? { holder: daemonLease.holder, pid: daemonLease.pid, expiresAt: iso(daemonLease.expiresAt) ?? "" }
        : null,
      lastCycle: parseLastCycle(rows.lastCycle),
    },
    deliveries: rows.leases
      .filter((l) => l.lease.name.startsWith(DELIVERY_LEASE_PREFIX))
      .map(({ lease: l, live }) => ({
        sink: l.name.slice(DELIVERY_LEASE_PREFIX.length),
        holder: l.holder,
        pid: l.pid,
        since: iso(l.acquiredAt) ?? "",
        expiresAt: iso(l.expiresAt) ?? "",
        live,
      })),
    runs: runs.map((r) => ({
      id: r.id,
      startedAt: iso(r.started_at) ?? "",
      finishedAt: iso(r.finished_at),
      outcome: r.outcome,
      filterKey: r.filter_key,
      fetched: r.fetched,
      inserted: r.inserted,
      duplicates: r.duplicates,
      mutations: r.mutations,
      quarantined: r.quarantined,
      warnings: r.warnings,
      requests: r.requests,
      throttled: r.throttled,
      retries: r.retries,
      error: r.error,
    })),
    coverage: {
      daysChecked: coverageCounts.checked,
      daysWithGaps: coverageCounts.gaps ?? 0,
      gaps: gaps.map(dayOf),
      daysOpen: coverageCounts.open ?? 0,
      open: openDays.map(dayOf),
    },
    quarantined: {
      total: rows.quarantineTotal,
      recent: rows.quarantineRecent.map((q) => ({
        recordId: q.record_id,
        receivedAt: iso(q.received_at) ?? "",
        issue: firstIssue(q.issues),
      })),
    },
    mutated: {
      records: rows.mutatedCounts.records,
      revisions: rows.mutatedCounts.revisions,
      recent: rows.mutatedRecent,
    },
    entityHistory: rows.entityBacklog,
  };
}

function dayOf(g: DayRow) {
  return { filterKey: g.filter_key, day: g.day, local: g.local_count, server: g.server_total };
}

const lastCycleSchema = z.record(z.string(), z.unknown());

function parseLastCycle(row: string | undefined): Record<string, unknown> | null {
  if (typeof row !== "string") return null;
  try {
    const parsed = lastCycleSchema.safeParse(JSON.parse(row));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}
