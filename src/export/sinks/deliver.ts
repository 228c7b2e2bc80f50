// Delivery to the SIEM sinks, per sink and project: the records after the sink's cursor (`sink:<name>`),
// a batch at a time, the cursor advanced only after the receiver acknowledged the batch; then the
// control findings waiting in the outbox for that sink, as OCSF Detection Findings, each row marked
// delivered only after its batch was acknowledged. A crash repeats at most the unacknowledged batch,
// and every event carries a stable id by which the SIEM can drop that repeat.
import type { SiemSink } from "../../controls/config.ts";
import { type DueAlert, type RunOutbox, retryDelayMs, runOutbox } from "../../controls/deliver.ts";
import { outboxFindingSchema } from "../../controls/finding.ts";
import { SinkBusyError, underSinkLease } from "../../controls/sinkLease.ts";
import { unreadableRow } from "../../controls/sinks/failure.ts";
import { SinkError } from "../../errors.ts";
import { markDelivered, markFailed, type OutboxRow } from "../../store/controls/outbox.ts";
import { advanceCursor, readCursor } from "../../store/export/cursors.ts";
import type { ProjectStore } from "../../store/projectStores.ts";
import { eventBatches } from "../events.ts";
import { findingEventId, findingToOcsf } from "../ocsfFindings.ts";
import { hecTransport } from "./hec.ts";
import { httpTransport } from "./http.ts";
import { markStuck, SINK_CURSOR_PREFIX } from "./sinkStatus.ts";
import { syslogTransport } from "./syslog.ts";
import { type SinkEvent, sendWithRetry, type Transport } from "./transport.ts";

function transportFor(sink: SiemSink): Transport {
  switch (sink.kind) {
    case "splunk-hec":
      return hecTransport(sink);
    case "http":
      return httpTransport(sink);
    case "syslog":
      return syslogTransport(sink);
  }
}

export interface SinkCount {
  /** Records acknowledged by the receiver in this run. */
  events: number;
  /** Findings acknowledged by the receiver in this run. */
  findings: number;
}

/** The cursor a sink keeps per project. */
const sinkCursor = (sink: SiemSink): string => `${SINK_CURSOR_PREFIX}${sink.name}`;

/** An outbox row's finding as the sink's event (OCSF Detection Finding, or its own JSON), or why not. */
function findingEvent(sink: SiemSink, project: string, row: DueAlert): SinkEvent | string {
  if (row.unreadable !== null) return row.unreadable;
  const parsed = outboxFindingSchema.safeParse(JSON.parse(row.payload));
  if (!parsed.success) return unreadableRow(row, "its finding is not one flagtrail wrote");
  const { finding } = parsed.data;
  const line = JSON.stringify(sink.format === "ocsf" ? findingToOcsf(finding) : finding);
  return { id: findingEventId(project, finding.id), line };
}

async function markRowFailed(part: ProjectStore, sink: SiemSink, row: OutboxRow, reason: string) {
  await markFailed(part.store, row, Date.now() + retryDelayMs(sink.backoffSeconds, row.attempts), reason);
}

async function deliverFindings(
  part: ProjectStore,
  sink: SiemSink,
  transport: Transport,
  stop: AbortSignal,
  outbox: RunOutbox,
): Promise<number> {
  const rows: { row: OutboxRow; event: SinkEvent }[] = [];
  for (const row of await outbox.dueFor(sink.name)) {
    const event = findingEvent(sink, part.project, row);
    // A row that cannot be read fails alone (its error kept, tried again later): the others still go.
    if (typeof event === "string") await markRowFailed(part, sink, row, event);
    else rows.push({ row, event });
  }
  let delivered = 0;
  for (let start = 0; start < rows.length && !stop.aborted; start += sink.batchSize) {
    const batch = rows.slice(start, start + sink.batchSize);
    const rowOf = new Map(batch.map((b) => [b.event, b.row]));
    // A part the receiver took (all of the batch, or halves of one it found too large) is marked at once.
    const acked = async (events: readonly SinkEvent[]) => {
      for (const event of events) {
        await markDelivered(part.store, rowOf.get(event)!, Date.now());
        rowOf.delete(event);
      }
      delivered += events.length;
    };
    try {
      await sendWithRetry(
        transport,
        batch.map((b) => b.event),
        { retries: sink.retries, backoffMs: sink.backoffSeconds * 1000 },
        acked,
      );
    } catch (error) {
      // The row names its sink: it keeps the reason alone.
      const reason =
        error instanceof SinkError ? error.reason : error instanceof Error ? error.message : String(error);
      for (const row of rowOf.values()) await markRowFailed(part, sink, row, reason);
      throw error;
    }
  }
  return delivered;
}

/**
 * Sends the sink what it has not acknowledged yet: the project's records after its cursor (unless
 * `findingsOnly`), then its findings due in the outbox, also when the receiver refused a record event
 * (not when it is down or refuses the sink itself), under the sink's delivery lease (read after it is taken: a run that held it
 * until now has moved the cursor). Throws a SinkError naming the sink when the receiver refuses (what
 * it acknowledged before stays acknowledged), SinkBusyError (nothing sent) when another run is
 * delivering to it.
 */
export function deliverToSink(
  part: ProjectStore,
  sink: SiemSink,
  options: DeliveryOptions = {},
): Promise<SinkCount> {
  return underSinkLease(part.store, sink.name, options.stop, (stop) =>
    deliverUnderLease(part, sink, { ...options, stop }),
  );
}

interface DeliveryOptions {
  findingsOnly?: boolean;
  stop?: AbortSignal;
  /** The run's outbox, shared by its sinks (runOutbox); this sink's alone when not given. */
  outbox?: RunOutbox;
}

async function deliverUnderLease(
  part: ProjectStore,
  sink: SiemSink,
  options: DeliveryOptions & { stop: AbortSignal },
): Promise<SinkCount> {
  const { findingsOnly = false, stop } = options;
  const transport = transportFor(sink);
  const records = { events: 0, seq: 0 };
  let stuck: SinkError | undefined;
  try {
    if (!findingsOnly) await deliverRecords(part, sink, transport, stop, records);
  } catch (error) {
    // A refused event (too large alone, HTTP 400) stops the records there, but the findings are the
    // alerts, another stream: they still go. A receiver down (retryable), a refused token or a missing
    // secret would refuse them too, and each failure would put their next try off (backoff).
    if (!(error instanceof SinkError) || !error.eventsRefused) throw error;
    stuck = error;
    // For `status`: the log and the exit code say it once, the sink stays stuck until it takes the event.
    await markStuck(part.store, sink, records.seq, error.reason);
  }
  // Stopped (the daemon's SIGTERM, the lease lost): the cursor stays after the last acknowledged batch.
  if (stop.aborted) return { events: records.events, findings: 0 };
  let findings: number;
  try {
    const outbox = options.outbox ?? (await runOutbox(part.store, Date.now(), true));
    findings = await deliverFindings(part, sink, transport, stop, outbox);
  } catch (error) {
    // The stuck record is what holds the sink: said first (the findings' own error stays on their rows).
    throw stuck ?? error;
  }
  if (stuck) throw stuck;
  return { events: records.events, findings };
}

/**
 * The project's records after the sink's cursor, the cursor moved after each part the receiver took;
 * `count.seq` where it is.
 */
async function deliverRecords(
  part: ProjectStore,
  sink: SiemSink,
  transport: Transport,
  stop: AbortSignal,
  count: { events: number; seq: number },
): Promise<void> {
  const policy = { retries: sink.retries, backoffMs: sink.backoffSeconds * 1000 };
  const afterSeq = await readCursor(part.store, part.project, sinkCursor(sink));
  count.seq = afterSeq;
  const batches = eventBatches(part.store, {
    project: part.project,
    afterSeq,
    format: sink.format,
    batchSize: sink.batchSize,
  });
  for await (const batch of batches) {
    if (stop.aborted) return;
    // After each part the receiver took: halves of a batch it found too large go one after the other,
    // and an event too large alone must not take back those before it.
    await sendWithRetry(transport, batch.events, policy, async (sent) => {
      const seq = sent.at(-1)?.seq ?? batch.lastSeq;
      await advanceCursor(part.store, part.project, sinkCursor(sink), seq);
      count.events += sent.length;
      count.seq = seq;
    });
  }
}

/**
 * Every SIEM sink, each on its own: one refusing (`error`), or being delivered by another run (`skipped`),
 * does not hold the others back; the run's outbox read once for all of them (runOutbox). For the cycle's log.
 */
export async function deliverSinks(
  part: ProjectStore,
  sinks: readonly SiemSink[],
  options: DeliveryOptions = {},
): Promise<Record<string, SinkCount | { error: string } | { skipped: string }>> {
  const result: Record<string, SinkCount | { error: string } | { skipped: string }> = {};
  const outbox = options.outbox ?? (await runOutbox(part.store, Date.now()));
  for (const sink of sinks) {
    if (options.stop?.aborted) break;
    try {
      result[sink.name] = await deliverToSink(part, sink, { ...options, outbox });
    } catch (error) {
      if (error instanceof SinkBusyError) result[sink.name] = { skipped: error.message };
      else if (error instanceof SinkError) result[sink.name] = { error: error.message };
      else throw error;
    }
  }
  return result;
}
