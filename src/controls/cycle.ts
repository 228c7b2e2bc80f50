// The daemon's side of controls: after each cycle's sync (and report), the config's controls are
// checked since the last check and the outbox delivered, as `check --notify` does from cron; the SIEM
// sinks get the records they have not acknowledged yet.
import { IntegrityError, sinkLabel } from "../errors.ts";
import { deliverSinks } from "../export/sinks/deliver.ts";
import { configFileOf, readConfigText } from "../projects.ts";
import { waitingAlerts } from "../store/controls/outbox.ts";
import type { ProjectStore } from "../store/projectStores.ts";
import { type CheckConfig, checkProject } from "./check.ts";
import { type ControlsConfig, isSiemSink, parseControlsConfig, type Sink } from "./config.ts";
import { deliverAlerts, runOutbox } from "./deliver.ts";

/** The config file's controls and sinks, or null when there is no file or it lists neither a control nor a SIEM sink. */
export function daemonControls(configOption: string | undefined): ControlsConfig | null {
  const file = configFileOf(configOption);
  if (file === undefined) return null;
  const config = parseControlsConfig(readConfigText(file), file);
  return config.controls.length > 0 || config.sinks.some(isSiemSink) ? config : null;
}

/**
 * The outbox's alerts to every sink, and to the SIEM sinks the records after their cursors too (unless
 * `findingsOnly`); a sink that refuses is counted, named in `sinks`, and holds no other back.
 */
async function deliverOutbox(
  part: ProjectStore,
  sinks: readonly Sink[],
  options: { findingsOnly?: boolean; stop?: AbortSignal } = {},
) {
  const now = Date.now();
  // Which sinks wait, and the waivers, read once for all of them (each reads its rows under its lease).
  const outbox = await runOutbox(part.store, now);
  const sent = await deliverAlerts(part.store, sinks, now, options.stop, outbox);
  const siem = sinks.filter(isSiemSink);
  return siem.length === 0
    ? sent
    : { ...sent, sinks: await deliverSinks(part, siem, { ...options, outbox }) };
}

/** The sinks a delivery skipped because another run was delivering to them. */
function busySinks(sent: Awaited<ReturnType<typeof deliverOutbox>>): string[] {
  const siem = "sinks" in sent ? Object.entries(sent.sinks) : [];
  return [...(sent.busy ?? []), ...siem.filter(([, r]) => "skipped" in r).map(([name]) => name)];
}

/**
 * `check --notify`: every project's outbox delivered, the findings only (the SIEM sinks' records go with
 * the daemon or `export --sink`); then what still waits for a sink of the config (a refusal now or one
 * whose retry is not due yet), as one sentence without its full stop, or null when nothing does. Alerts of
 * a sink no longer in the config wait unsaid: they would be said on every run. A sink another run was
 * delivering to is left out of it (that run sends them, and says so if it cannot) and named in `busy`.
 */
export async function notifyFindings(
  parts: readonly ProjectStore[],
  sinks: readonly Sink[],
): Promise<{ undelivered: string | null; busy: string[] }> {
  const configured = new Set(sinks.map((s) => s.name));
  const busy = new Set<string>();
  const waiting = new Map<string, { count: number; error: string | null }>();
  for (const part of parts) {
    const skipped = busySinks(await deliverOutbox(part, sinks, { findingsOnly: true }));
    for (const name of skipped) busy.add(name);
    for (const row of await waitingAlerts(part.store)) {
      // Per project: the lease is the project's, another run may hold it in one project only.
      if (!configured.has(row.sink) || skipped.includes(row.sink)) continue;
      const seen = waiting.get(row.sink);
      waiting.set(row.sink, { count: (seen?.count ?? 0) + row.waiting, error: seen?.error ?? row.lastError });
    }
  }
  return { undelivered: waitingSentence(waiting), busy: [...busy] };
}

function waitingSentence(waiting: ReadonlyMap<string, { count: number; error: string | null }>) {
  if (waiting.size === 0) return null;
  const each = [...waiting].map(([sink, w]) => {
    // The row keeps the reason without the sink's name (SinkError.reason): named once, here.
    const why = w.error === null ? "" : ` (${w.error})`;
    return waiting.size === 1 ? `${sinkLabel(sink)}${why}` : `${w.count} for ${sinkLabel(sink)}${why}`;
  });
  const total = [...waiting.values()].reduce((sum, w) => sum + w.count, 0);
  const alerts = total === 1 ? "1 alert waits" : `${total} alerts wait`;
  return (
    `${alerts} undelivered in the outbox${waiting.size === 1 ? " for " : ": "}${each.join(", ")}; ` +
    "the next delivery tries again"
  );
}

/** One check and delivery, none sent once `stop` aborts; the counts go to the cycle's log line (never a secret). */
export async function checkAndDeliver(part: ProjectStore, config: CheckConfig, stop?: AbortSignal) {
  const checked = config.controls.length > 0 ? await checkProject(part, config, null, Date.now()) : null;
  const sent = await deliverOutbox(part, config.sinks, { stop });
  return {
    findings: checked?.findings.length ?? 0,
    open: checked?.findings.filter((f) => f.waiver === null).length ?? 0,
    ...sent,
  };
}

/**
 * After a failed sync: the sync-freshness controls alone, then the outbox's alerts (findings only). A
 * sync that keeps failing is what they watch for; after a successful one the last sync is fresh. A sync
 * that refused to write over a break (an IntegrityError: src/chainChecks.ts) fails at every tick until the
 * store is restored, so the integrity controls run too: the break is the alert. The other controls wait
 * for the records the next sync brings: this check is kept as one of a given period (the last minute), so
 * the next default check starts where the last one ended. Null: no such control.
 */
export async function checkAfterFailedSync(
  part: ProjectStore,
  config: CheckConfig,
  failure: unknown,
  stop?: AbortSignal,
) {
  const refused = failure instanceof IntegrityError;
  const controls = config.controls.filter(
    (c) => c.kind === "sync-freshness" || (refused && c.kind === "integrity"),
  );
  if (controls.length === 0) return null;
  const now = Date.now();
  const checked = await checkProject(
    part,
    // The config's signing key too: a sync refused over the head's signature is what the integrity control checks.
    { ...config, controls },
    { start: now - 60_000, end: now },
    now,
  );
  const sent = await deliverOutbox(part, config.sinks, { findingsOnly: true, stop });
  return {
    findings: checked.findings.length,
    open: checked.findings.filter((f) => f.waiver === null).length,
    ...sent,
  };
}
