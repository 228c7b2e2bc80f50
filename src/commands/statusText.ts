// `flagtrail status`'s text: the StoreStatus of storeStatus.ts, as lines for a terminal.
import { sinkLabel } from "../errors.ts";
import { entityBacklogPhrases } from "../report/entityBacklogText.ts";
import type { StoreStatus } from "./storeStatus.ts";

export function formatStatus(status: StoreStatus): string {
  const out: string[] = [];
  const r = status.records;
  out.push(`Database ${status.database}`);
  out.push(
    r.total === 0
      ? "Records: none yet (run `flagtrail sync`)"
      : `Records: ${r.total}, ${r.firstServerDay ?? "?"} .. ${r.lastServerDay ?? "?"} (server days; ${r.firstOccurredAt ?? "?"} .. ${r.lastOccurredAt ?? "?"} UTC)${r.undated > 0 ? `, ${r.undated} without a parseable date` : ""}`,
  );
  out.push(
    `Hash chain: ${status.chainHead.seq} links${status.chainHead.hash ? `, head ${status.chainHead.hash.slice(0, 16)}…` : ""}`,
    signatureLine(status.chainHead),
  );
  if (status.runningLease) {
    const l = status.runningLease;
    out.push(`Sync running since ${l.since}: ${l.holder}, pid ${l.pid} (lease renewed until ${l.expiresAt})`);
  }
  if (status.daemon.lease) out.push(`Daemon running: ${status.daemon.lease.holder}`);
  out.push(...status.deliveries.map(deliveryLine));
  const cycle = status.daemon.lastCycle;
  if (cycle) {
    const { at, ok, interrupted, error, report } = cycle as {
      at?: string;
      ok?: boolean;
      interrupted?: boolean;
      error?: string;
      report?: { from?: string; to?: string };
    };
    const reportText = report ? `, report ${report.from} .. ${report.to}` : "";
    const outcome = ok ? "ok" : interrupted ? "interrupted" : `failed${error ? `: ${error}` : ""}`;
    out.push(`Daemon's last cycle: ${at ?? "?"} ${outcome}${reportText}`);
  }
  out.push(status.checkpoints.length === 0 ? "Checkpoints: none" : "Checkpoints:");
  for (const c of status.checkpoints) {
    out.push(`  ${c.filterKey}: ${c.latestId} (${c.latestOccurredAt ?? "no time"}), updated ${c.updatedAt}`);
  }
  for (const p of status.pending) {
    // While a sync runs, its plan is in progress, not interrupted.
    out.push(
      status.runningLease
        ? `Sync in progress for ${p.filterKey} ${p.since} .. ${p.until}: ${p.windowsDone}/${p.windowsTotal} windows done`
        : `Interrupted sync of ${p.filterKey} ${p.since} .. ${p.until}: ${p.windowsDone}/${p.windowsTotal} windows done; the next sync resumes it`,
    );
  }
  out.push(status.runs.length === 0 ? "Runs: none" : "Last runs:");
  for (const run of status.runs) {
    // "running" without a live lease means the process died: the next sync marks it interrupted.
    const outcome =
      run.outcome === "running" && !status.runningLease ? "running (process gone)" : run.outcome;
    out.push(
      `  #${run.id} ${run.startedAt} ${outcome} [${run.filterKey}] fetched ${run.fetched}, new ${run.inserted}, duplicates ${run.duplicates}, mutations ${run.mutations}, quarantined ${run.quarantined}, requests ${run.requests}, retries ${run.retries}, 429s ${run.throttled}${run.error ? ` — ${run.error}` : ""}`,
    );
  }
  const cov = status.coverage;
  out.push(
    `Coverage: ${cov.daysChecked} days checked, ${cov.daysWithGaps} with gaps (local count ≠ server total)`,
  );
  for (const gap of cov.gaps)
    out.push(`  ${gap.day} [${gap.filterKey}]: ${gap.local} stored, server says ${gap.server}`);
  if (cov.daysOpen > 0) {
    out.push(
      `Open days: ${cov.daysOpen} (checked before the server's day ended; not complete yet, the next sync checks them again)`,
    );
    for (const day of cov.open)
      out.push(
        `  ${day.day} [${day.filterKey}]: open, ${day.local} stored so far, server said ${day.server}`,
      );
  }
  out.push(`Quarantined records: ${status.quarantined.total}`);
  for (const q of status.quarantined.recent.slice(0, 10)) {
    out.push(`  ${q.recordId ?? "(no id)"} at ${q.receivedAt}: ${q.issue}`);
  }
  out.push(`Mutated records: ${status.mutated.records} (${status.mutated.revisions} revisions kept)`);
  for (const m of status.mutated.recent.slice(0, 10)) out.push(`  ${m.id}: ${m.revisions} revision(s)`);
  out.push(...entityHistoryLines(status.entityHistory));
  return `${out.join("\n")}\n`;
}

/** Whether the head is signed, and up to which seq (what a sync with FLAGTRAIL_SIGNING_KEY wrote). */
function signatureLine({ seq, signed, signedSeq }: StoreStatus["chainHead"]): string {
  const label = "Chain head signature:";
  if (!signed) return `${label} none (a sync with FLAGTRAIL_SIGNING_KEY signs the head)`;
  if (signedSeq === null) return `${label} signed by an older flagtrail (it did not record the seq)`;
  const since = signedSeq < seq ? `; records ${signedSeq + 1}..${seq} were stored since without the key` : "";
  return `${label} signed up to seq ${signedSeq}${since} (flagtrail verify with the key checks it)`;
}

/** A sink's delivery lease: who holds it and until when, or that its holder died and the next run takes it. */
function deliveryLine(d: StoreStatus["deliveries"][number]): string {
  const sink = sinkLabel(d.sink);
  return d.live
    ? `Delivery to ${sink} running since ${d.since}: ${d.holder}, pid ${d.pid} (lease renewed until ${d.expiresAt}); other runs skip the sink meanwhile`
    : `Delivery lease of ${sink} left by ${d.holder}, pid ${d.pid} (since ${d.since}, until ${d.expiresAt}): it expired or its holder is gone, the next delivery to the sink takes it over`;
}

/** How much of the entity history is read, so that a partial one is not taken for a complete one. */
function entityHistoryLines(rows: StoreStatus["entityHistory"]): string[] {
  if (rows.length === 0) return ["Entity history: not read yet"];
  const pending = rows.some((row) => row.pending > 0);
  return [
    `Entity history (as of the last entity pass)${pending ? ", the pending ones are read first by the next syncs (or now by `flagtrail sync --entities-only`)" : ""}:`,
    ...entityBacklogPhrases(rows).map((phrase) => `  ${phrase}`),
  ];
}
