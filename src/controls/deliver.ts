// Delivers the outbox: each due alert sent to its sink (./sinks/, one file per kind); marked delivered
// only when the sink accepted it (a 2xx, an exit 0), else tried again on a later run after a delay
// that doubles per attempt (at most an hour). A receiver may see an alert twice (a crash after it
// accepted, before the mark), always under the same finding id. An alert carries the finding's waiver as
// the delivery run reads it (once, for all its sinks; as `check --format json` prints it then), not as it
// was when the alert was queued.

import { z } from "zod";
import { findingEventId } from "../export/ocsfFindings.ts";
import {
  dueAlerts,
  markDelivered,
  markFailed,
  type OutboxRow,
  sinksWithDueAlerts,
} from "../store/controls/outbox.ts";
import { readWaivers } from "../store/controls/waivers.ts";
import type { AnyStore } from "../store/openAny.ts";
import { type AlertSink, isSiemSink, type Sink } from "./config.ts";
import { SinkBusyError, underSinkLease } from "./sinkLease.ts";
import { sendExec } from "./sinks/exec.ts";
import { type SendFailure, unreadableRow } from "./sinks/failure.ts";
import { sendSlack } from "./sinks/slack.ts";
import { sendWebhook } from "./sinks/webhook.ts";
import { waiversInForce } from "./waivers.ts";

const MAX_BACKOFF_MS = 3_600_000;

/**
 * The wait before the next attempt of an alert tried `attempts` times: `backoffSeconds` doubled per
 * attempt, at most an hour. No backoff stays none: past 1023 attempts 2^attempts is Infinity, and
 * 0 × Infinity a NaN that next_attempt_at refuses.
 */
export function retryDelayMs(backoffSeconds: number, attempts: number): number {
  return backoffSeconds === 0 ? 0 : Math.min(MAX_BACKOFF_MS, backoffSeconds * 1000 * 2 ** attempts);
}

/** Sends one alert: null when the sink accepted it, else why not (never a secret). */
function send(sink: AlertSink, row: DueAlert): Promise<SendFailure | null> {
  switch (sink.kind) {
    case "webhook":
      return sendWebhook(sink, row);
    case "slack":
      return sendSlack(sink, row);
    case "exec":
      return sendExec(sink, row);
  }
}

/**
 * A due alert; `unreadable` says why its row cannot be sent (its payload not JSON, or not a finding): the
 * row is then marked failed with that error, alone, on every delivery, and the others go out. `key`: its
 * idempotency key, the finding's event id (`<project>:finding:<id>`): two projects may hold one finding
 * id (one record id), and a receiver dropping a repeated key would drop the second project's alert.
 */
export type DueAlert = OutboxRow & { unreadable: string | null; key: string };

const alertBodySchema = z.looseObject({ finding: z.looseObject({}) });

function withWaiver(row: OutboxRow, waivers: ReadonlyMap<string, unknown>): DueAlert {
  let json: unknown;
  try {
    json = JSON.parse(row.payload);
  } catch {
    return { ...row, key: row.finding_id, unreadable: unreadableRow(row, "its payload is not JSON") };
  }
  if (!alertBodySchema.safeParse(json).success)
    return { ...row, key: row.finding_id, unreadable: unreadableRow(row, "its payload holds no finding") };
  // The body as parsed, not as the schema rebuilds it: each key keeps its place, and the receiver sees
  // the body `check --format json` would print.
  const body = json as { finding: Record<string, unknown> };
  const finding = { ...body.finding, waiver: waivers.get(row.finding_id) ?? null };
  const { project } = body.finding;
  const key = typeof project === "string" ? findingEventId(project, row.finding_id) : row.finding_id;
  return { ...row, key, payload: JSON.stringify({ ...body, finding }), unreadable: null };
}

/**
 * One delivery run's view of the outbox, shared by every sink it delivers to (alert and SIEM sinks): which
 * sinks had alerts due at its start (one read), and the waivers in force, read once when a sink first has
 * some. Each sink's own rows are not part of it: `dueFor` reads them, to be called under the sink's
 * delivery lease (./sinkLease.ts), as a run that held the lease until then has delivered some of them.
 */
export interface RunOutbox {
  /** Whether `sink` had alerts due at the run's start; one queued since waits for the next run. */
  waits(sink: string): boolean;
  /**
   * The sink's alerts due at the run's time, each payload's `waiver` set to the one in force: a finding
   * waived after its alert was queued goes out with its waiver (a receiver can tell an accepted finding).
   */
  dueFor(sink: string): Promise<DueAlert[]>;
}

/** The outbox for one run at `now`; `allSinks`: no first read, every sink may have some (one sink's run). */
export async function runOutbox(store: AnyStore, now: number, allSinks = false): Promise<RunOutbox> {
  const waiting = allSinks ? null : await sinksWithDueAlerts(store, now);
  let waivers: Promise<ReadonlyMap<string, unknown>> | undefined;
  return {
    waits: (sink) => waiting === null || waiting.has(sink),
    async dueFor(sink) {
      if (waiting !== null && !waiting.has(sink)) return [];
      const due = await dueAlerts(store, now, sink);
      if (due.length === 0) return [];
      const day = new Date(now).toISOString().slice(0, 10);
      waivers ??= readWaivers(store).then((rows) => waiversInForce(rows, day));
      const inForce = await waivers;
      return due.map((row) => withWaiver(row, inForce));
    },
  };
}

interface DeliveryCount {
  delivered: number;
  failed: number;
  /** Sinks skipped because another run is delivering to them (only when there are some). */
  busy?: string[];
}

/**
 * Sends one sink's due alerts in order. After a failure about the sink itself (./sinks/failure.ts: a
 * timeout, a refused connection, a 5xx) nothing more is sent to it this run: a receiver that hangs would
 * cost a full timeout per alert, one after the other, and one that refuses would get a request per alert.
 * The rest are marked failed with that same error and their usual backoff rather than left due: the sink
 * then backs off as a whole (the next run does not probe it again at once with the next untried alert),
 * and `status` and `--notify` give every waiting alert the reason it waits, not null for "not tried".
 */
async function deliverToAlertSink(
  store: AnyStore,
  sink: AlertSink,
  rows: readonly DueAlert[],
  count: DeliveryCount,
  stop: AbortSignal,
): Promise<void> {
  let down: SendFailure | null = null;
  for (const row of rows) {
    if (stop.aborted) break;
    const failure: SendFailure | null =
      row.unreadable !== null
        ? { reason: row.unreadable, sinkDown: false }
        : (down ?? (await send(sink, row)));
    if (failure === null) {
      await markDelivered(store, row, Date.now());
      count.delivered += 1;
      continue;
    }
    if (failure.sinkDown) down = failure;
    await markFailed(
      store,
      row,
      Date.now() + retryDelayMs(sink.backoffSeconds, row.attempts),
      failure.reason,
    );
    count.failed += 1;
  }
}

/**
 * Delivers every due alert of the store to its sink, sink by sink, each under its delivery lease
 * (./sinkLease.ts; alerts of sinks no longer configured wait); a sink that is down, or being delivered by
 * another run (named in `busy`), holds no other back. Once `stop` aborts (the daemon's SIGTERM) no
 * further alert is sent: the rest stay due for the next run. `outbox`: the run's, shared with its SIEM
 * sinks (runOutbox), read here when not given.
 */
export async function deliverAlerts(
  store: AnyStore,
  sinks: readonly Sink[],
  now: number,
  stop?: AbortSignal,
  outbox?: RunOutbox,
): Promise<DeliveryCount> {
  // The SIEM sinks' rows are delivered with their records (src/export/sinks/deliver.ts).
  const alertSinks = sinks.filter((s): s is AlertSink => !isSiemSink(s));
  const count: DeliveryCount = { delivered: 0, failed: 0 };
  const run = outbox ?? (await runOutbox(store, now));
  for (const sink of alertSinks) {
    if (stop?.aborted) break;
    if (!run.waits(sink.name)) continue;
    try {
      await underSinkLease(store, sink.name, stop, async (signal) => {
        const rows = await run.dueFor(sink.name);
        await deliverToAlertSink(store, sink, rows, count, signal);
      });
    } catch (error) {
      if (!(error instanceof SinkBusyError)) throw error;
      count.busy = [...(count.busy ?? []), sink.name];
    }
  }
  return count;
}
