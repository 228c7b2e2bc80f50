// What `status` says about the SIEM sinks of a project: how far each sink's records went (its cursor:
// the last record the receiver acknowledged, and how many are after it), the findings waiting for it in
// the outbox, and whether its records are stuck, refused for good and not retried (an event too large
// alone, HTTP 400, refused credentials). The delivery marks that in the project's meta
// (`sink.stuck:<name>`: where the cursor stood, and the reason alone as the outbox keeps it, never a
// secret or the sink's url); once the cursor moves past, the mark is over (the next refusal writes its
// own). Sinks are named, never their urls (which may carry a token).
import { z } from "zod";
import { sinkLabel } from "../../errors.ts";
import { readCursorsOf } from "../../store/export/cursors.ts";
import { readMetaValuesWithPrefix, writeMetaValue } from "../../store/metaStore.ts";
import type { AnyStore } from "../../store/openAny.ts";
import { parseStoredJson } from "../../storedJson.ts";

/** A SIEM sink's record cursor is `sink:<name>`, per project. */
export const SINK_CURSOR_PREFIX = "sink:";
const STUCK_PREFIX = "sink.stuck:";

const stuckSchema = z.object({ afterSeq: z.number().int(), at: z.number(), reason: z.string() });

/** The sink's records stop after `afterSeq`: refused for good (not retryable). */
export async function markStuck(
  store: AnyStore,
  sink: { name: string; url: string },
  afterSeq: number,
  reason: string,
): Promise<void> {
  // The reason is the transport's words, which never hold the url; its text is kept out all the same.
  const kept = reason.split(sink.url).join("its url");
  const value = JSON.stringify({ afterSeq, at: Date.now(), reason: kept });
  await writeMetaValue(store, `${STUCK_PREFIX}${sink.name}`, value);
}

export interface SinkStatus {
  sink: string;
  /** The last record the receiver acknowledged (seq, its time) and when; null: none yet. */
  delivered: { seq: number; occurredAt: string | null; at: string } | null;
  /** Records stored after it: not delivered yet. */
  behind: number;
  /** Findings waiting for the sink in the outbox (also in the controls' Alerts line). */
  findingsWaiting: number;
  /** The records after `afterSeq` refused for good (not retried) since `since`, and why; null: not stuck. */
  stuck: { afterSeq: number; since: string; reason: string } | null;
}

const iso = (ms: number | null) => (ms === null ? null : new Date(Number(ms)).toISOString());

/**
 * Every SIEM sink that delivered records in this project, is stuck at its first one, or is `configured`
 * (the config's, by name: one that never delivered is listed too); `total` the project's records (behind
 * a sink without a cursor), `waiting` the outbox's undelivered alerts per sink.
 */
export async function readSinksStatus(
  store: AnyStore,
  project: string,
  total: number,
  waiting: readonly { sink: string; alerts: number }[],
  configured: readonly string[] = [],
): Promise<SinkStatus[]> {
  const cursors = new Map(
    (await readCursorsOf(store, project, SINK_CURSOR_PREFIX)).map((c) => [
      c.name.slice(SINK_CURSOR_PREFIX.length),
      c,
    ]),
  );
  const marks = new Map<string, z.infer<typeof stuckSchema> | null>();
  for (const [key, value] of await readMetaValuesWithPrefix(store, STUCK_PREFIX))
    marks.set(key.slice(STUCK_PREFIX.length), parseStoredJson(stuckSchema, value));
  const names = [...new Set([...cursors.keys(), ...marks.keys(), ...configured])].sort();
  return names.map((sink) => {
    const cursor = cursors.get(sink);
    const seq = cursor === undefined ? 0 : Number(cursor.seq);
    const mark = marks.get(sink);
    return {
      sink,
      delivered:
        cursor === undefined
          ? null
          : { seq, occurredAt: iso(cursor.occurredAt), at: iso(cursor.updatedAt) ?? "" },
      behind: cursor === undefined ? total : Number(cursor.behind),
      findingsWaiting: waiting.find((w) => w.sink === sink)?.alerts ?? 0,
      // A mark the cursor has since moved past is over: the receiver took that event.
      stuck:
        mark && mark.afterSeq === seq
          ? { afterSeq: mark.afterSeq, since: iso(mark.at) ?? "", reason: mark.reason }
          : null,
    };
  });
}

/** `SIEM sinks:` and a line per sink (two when it is stuck), or nothing when there is none. */
export function sinksStatusText(sinks: readonly SinkStatus[]): string {
  if (sinks.length === 0) return "";
  const out = ["SIEM sinks:"];
  for (const s of sinks) {
    const d = s.delivered;
    const records = d
      ? `records delivered to seq ${d.seq} (the last occurred ${d.occurredAt ?? "at no parseable time"}, acknowledged ${d.at})`
      : "no record delivered yet";
    const findings = s.findingsWaiting === 1 ? "1 finding" : `${s.findingsWaiting} findings`;
    out.push(`  ${sinkLabel(s.sink)}: ${records}, ${s.behind} behind; ${findings} waiting`);
    if (s.stuck) {
      out.push(
        `    stuck since ${s.stuck.since} after seq ${s.stuck.afterSeq}, refused for good: ${s.stuck.reason}; ` +
          "each delivery of its records stops there until that changes",
      );
    }
  }
  return `${out.join("\n")}\n`;
}
