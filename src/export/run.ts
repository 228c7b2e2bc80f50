// One `flagtrail export`: every project asked for, its records (or its control findings) after its
// cursor or in the period, up to where the store stood when the export began, into one output. A cursor
// moves only once the output is complete and durable: a run killed at any point leaves every cursor where
// it was, and the next run writes the same events again (a SIEM drops repeats by the event's id).
import { findingOf } from "../controls/check.ts";
import { waiversInForce } from "../controls/waivers.ts";
import { keysetPages } from "../keyset.ts";
import { readWaivers } from "../store/controls/waivers.ts";
import { advanceCursor, readCursor } from "../store/export/cursors.ts";
import { readFindingsPage } from "../store/export/findings.ts";
import { maxSeq } from "../store/metaStore.ts";
import type { ProjectStore } from "../store/projectStores.ts";
import { type ExportFormat, eventBatches } from "./events.ts";
import { findingToOcsf } from "./ocsfFindings.ts";
import type { LineSink } from "./output.ts";

export interface ExportRequest {
  parts: readonly ProjectStore[];
  format: ExportFormat;
  /** occurred_at (findings: first seen) in [from, to), epoch ms, when given. */
  from?: number | undefined;
  to?: number | undefined;
  /** Only what this consumer has not had yet; advanced to the end of this export once it is durable. */
  cursor?: string | undefined;
  /** Control findings as Detection Findings instead of the records. */
  findings: boolean;
  batchSize: number;
  now: number;
}

export interface ExportResult {
  events: number;
  /** Per project: the seq the export went up to (and its cursor, if any, now stands at). */
  projects: { project: string; fromSeq: number; toSeq: number; events: number }[];
}

async function writeFindings(part: ProjectStore, request: ExportRequest, sink: LineSink): Promise<number> {
  const waivers = waiversInForce(
    await readWaivers(part.store),
    new Date(request.now).toISOString().slice(0, 10),
  );
  const pages = keysetPages(
    (afterId, limit) => readFindingsPage(part.store, { afterId, from: request.from, to: request.to, limit }),
    { first: null as string | null, limit: request.batchSize, keyOf: (row) => row.id },
  );
  let count = 0;
  for await (const rows of pages) {
    const lines = rows.map((row) =>
      JSON.stringify(
        findingToOcsf({
          ...findingOf(row, part.project, row.first_seen_at),
          waiver: waivers.get(row.id) ?? null,
        }),
      ),
    );
    await sink.write(lines);
    count += lines.length;
  }
  return count;
}

async function writeRecords(
  part: ProjectStore,
  request: ExportRequest,
  range: { afterSeq: number; toSeq: number },
  sink: LineSink,
): Promise<number> {
  let count = 0;
  for await (const batch of eventBatches(part.store, {
    project: part.project,
    afterSeq: range.afterSeq,
    toSeq: range.toSeq,
    from: request.from,
    to: request.to,
    format: request.format,
    batchSize: request.batchSize,
  })) {
    await sink.write(batch.events.map((e) => e.line));
    count += batch.events.length;
  }
  return count;
}

/** Writes the export into `sink`, finishes it, then advances the cursors. On failure abandons the sink. */
export async function runExport(request: ExportRequest, sink: LineSink): Promise<ExportResult> {
  const result: ExportResult = { events: 0, projects: [] };
  try {
    for (const part of request.parts) {
      const afterSeq =
        request.cursor === undefined ? 0 : await readCursor(part.store, part.project, request.cursor);
      // Where the store stands now: records a sync adds meanwhile go to the next export, not half into this one.
      const toSeq = await maxSeq(part.store);
      const events = request.findings
        ? await writeFindings(part, request, sink)
        : await writeRecords(part, request, { afterSeq, toSeq }, sink);
      result.events += events;
      result.projects.push({
        project: part.project,
        fromSeq: afterSeq,
        toSeq: Math.max(afterSeq, toSeq),
        events,
      });
    }
    await sink.finish();
  } catch (error) {
    await sink.abandon();
    throw error;
  }
  if (request.cursor !== undefined) {
    for (const [i, part] of request.parts.entries()) {
      await advanceCursor(part.store, part.project, request.cursor, result.projects[i]?.toSeq ?? 0);
    }
  }
  return result;
}
