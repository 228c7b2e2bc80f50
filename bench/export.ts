// Export throughput: `flagtrail export`'s OCSF path (keyset batches, the per-batch detail reads, the
// mapping, JSON, a durable file) in events/s, against a floor measured in the same run on the same store —
// the same rows read by the same keyset batches and written as plain JSON lines through the same file
// sink — and the raw format. Peak heap growth (garbage included) and the heap retained across batches
// (after full GCs) show that memory stays that of a batch.
// BENCH_SCALE=full (npm run bench -- --scale full) uses 1,000,000 records; the default 50,000.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileSink, type LineSink } from "../src/export/output.ts";
import { runExport } from "../src/export/run.ts";
import { readRecordBatch } from "../src/store/export/records.ts";
import { openStore } from "../src/store/open.ts";
import { createRecordWriter } from "../test/helpers/storeFixtures.ts";
import { PAGE, simulatedRecords } from "./writeRecords.ts";

const RECORDS = process.env.BENCH_SCALE === "full" ? 1_000_000 : 50_000;
const BATCH = 1000;

/** The highest heap seen by a measured sink since the last timed() began. */
let peakHeap = 0;

/** A sink that notes the heap while it writes (sampled per batch, once the batch is built). */
function measured(sink: LineSink): LineSink {
  return {
    async write(lines) {
      peakHeap = Math.max(peakHeap, process.memoryUsage().heapUsed);
      await sink.write(lines);
    },
    finish: () => sink.finish(),
    abandon: () => sink.abandon(),
  };
}

/**
 * What an OCSF export keeps alive: heap after a full GC every tenth batch, highest minus the start. Not
 * timed (the GCs would count); flat memory means this does not grow with the record count.
 */
async function retainedHeapMb(run: (sink: LineSink) => Promise<void>, inner: LineSink): Promise<number> {
  const gc = globalThis.gc;
  if (gc === undefined) return Number.NaN;
  gc();
  const base = process.memoryUsage().heapUsed;
  let highest = base;
  let batches = 0;
  await run({
    async write(lines) {
      await inner.write(lines);
      batches += 1;
      if (batches % 10 === 0) {
        gc();
        highest = Math.max(highest, process.memoryUsage().heapUsed);
      }
    },
    finish: () => inner.finish(),
    abandon: () => inner.abandon(),
  });
  return (highest - base) / 1e6;
}

async function timed(run: () => Promise<void>): Promise<{ ms: number; heapGrowthMb: number }> {
  globalThis.gc?.();
  const base = process.memoryUsage().heapUsed;
  peakHeap = base;
  const started = performance.now();
  await run();
  return { ms: performance.now() - started, heapGrowthMb: (peakHeap - base) / 1e6 };
}

export async function benchExport(): Promise<Record<string, number>> {
  const dir = mkdtempSync(join(tmpdir(), "flagtrail-bench-export-"));
  const store = openStore(join(dir, "bench.db"));
  try {
    const writer = createRecordWriter(store);
    // Written in pieces: the generated records of a million do not all stay in memory at once.
    for (let done = 0; done < RECORDS; done += 50_000) {
      const records = simulatedRecords(Math.min(50_000, RECORDS - done), 7 + done);
      for (let i = 0; i < records.length; i += PAGE)
        await writer.writePage(records.slice(i, i + PAGE), { syncRunId: null });
    }
    const parts = [{ project: "default", store }];
    const exportAs = (format: "ocsf" | "raw") => async () => {
      const sink = measured(await fileSink(join(dir, `${format}.ndjson`)));
      await runExport({ parts, format, findings: false, batchSize: BATCH, now: Date.now() }, sink);
    };
    const plain = async () => {
      const sink = measured(await fileSink(join(dir, "plain.ndjson")));
      for (let afterSeq = 0; ; ) {
        const rows = await readRecordBatch(store, { afterSeq, limit: BATCH });
        if (rows.length === 0) break;
        await sink.write(rows.map((r) => JSON.stringify(r)));
        afterSeq = rows.at(-1)!.seq;
      }
      await sink.finish();
    };
    const floor = await timed(plain);
    const ocsf = await timed(exportAs("ocsf"));
    const raw = await timed(exportAs("raw"));
    const retained = await retainedHeapMb(
      async (sink) => {
        await runExport({ parts, format: "ocsf", findings: false, batchSize: BATCH, now: Date.now() }, sink);
      },
      await fileSink(join(dir, "retained.ndjson")),
    );
    const perSecond = (ms: number) => Math.round(RECORDS / (ms / 1000));
    return {
      records: RECORDS,
      ocsfEventsPerSecond: perSecond(ocsf.ms),
      rawEventsPerSecond: perSecond(raw.ms),
      plainJsonLinesPerSecond: perSecond(floor.ms),
      ocsfVsPlainJsonTimeRatio: ocsf.ms / floor.ms,
      rawVsPlainJsonTimeRatio: raw.ms / floor.ms,
      ocsfPeakHeapGrowthMb: ocsf.heapGrowthMb,
      plainPeakHeapGrowthMb: floor.heapGrowthMb,
      ocsfRetainedHeapGrowthMb: retained,
    };
  } finally {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
