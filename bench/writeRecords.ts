// The store's write cost: writePage of realistic records against a floor measured in the same run,
// a bare prepared INSERT of the same rows (values computed beforehand) into an identical store.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseAuditTime } from "../src/api/auditTime.ts";
import { chainLink, recordHash } from "../src/hash.ts";
import { buildSimulator } from "../src/simulator/index.ts";
import { sqliteOf } from "../src/store/connection.ts";
import { openStore, type Store } from "../src/store/open.ts";
import { createRecordWriter } from "../test/helpers/storeFixtures.ts";

export const PAGE = 1000;

/**
 * `count` records as the simulator serves them (newest first), passed through JSON as they would
 * arrive over HTTP so that nothing shares object identity with the generator.
 */
export function simulatedRecords(count: number, seed = 7): unknown[] {
  const sim = buildSimulator({ records: count, seed, now: Date.UTC(2024, 3, 15, 19) });
  const out: unknown[] = [];
  for (let pos = sim.store.size - 1; pos >= 0; pos--) {
    const record = sim.store.at(pos);
    if (record !== undefined) out.push(sim.store.render(record));
  }
  return JSON.parse(JSON.stringify(out)) as unknown[];
}

/** A fresh file store in a temp directory; `done()` closes and deletes it. */
export function tempStore(prefix: string): { store: Store; dir: string; done(): void } {
  const dir = mkdtempSync(join(tmpdir(), `flagtrail-bench-${prefix}-`));
  const store = openStore(join(dir, "bench.db"));
  return {
    store,
    dir,
    done() {
      store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function pages<T>(records: readonly T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < records.length; i += PAGE) out.push(records.slice(i, i + PAGE));
  return out;
}

/** Median of per-page milliseconds. */
function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[mid] ?? 0) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
}

/** Median ms of writePage per page of 1000, into a fresh store. */
export async function measureWritePage(records: readonly unknown[]): Promise<number> {
  const temp = tempStore("writes");
  try {
    const writer = createRecordWriter(temp.store);
    const times: number[] = [];
    for (const page of pages(records)) {
      const started = performance.now();
      const result = await writer.writePage(page, { syncRunId: null });
      times.push(performance.now() - started);
      if (result.inserted !== page.length)
        throw new Error(`bench: ${result.inserted} of ${page.length} inserted`);
    }
    return median(times);
  } finally {
    temp.done();
  }
}

type Row = unknown[];

/** The rows writePage would store, computed outside the timed part. */
function rowsOf(records: readonly unknown[]): Row[] {
  let head = "0".repeat(64);
  return records.map((raw, index) => {
    const r = raw as Record<string, unknown>;
    const time = parseAuditTime(String(r.date), String(r.time));
    const hash = recordHash(raw);
    head = chainLink(head, hash);
    return [
      JSON.stringify(raw),
      time?.occurredAt ?? null,
      time?.serverDay ?? null,
      hash,
      index + 1,
      head,
      0,
      null,
    ];
  });
}

/** Median ms per page of 1000 of a bare prepared INSERT of the same rows, one transaction a page. */
export function measureBareInsert(records: readonly unknown[]): number {
  const temp = tempStore("bare");
  try {
    const insert = sqliteOf(temp.store).prepare(
      `INSERT INTO audit_logs (raw_data, occurred_at, server_day, record_hash_bytes, seq, chain_hash_bytes,
         first_seen_at, sync_run_id)
       VALUES (?, ?, ?, unhex(?), ?, unhex(?), ?, ?)`,
    );
    const insertPage = sqliteOf(temp.store).transaction((rows: Row[]) => {
      for (const row of rows) insert.run(row);
    });
    const times: number[] = [];
    for (const page of pages(rowsOf(records))) {
      const started = performance.now();
      insertPage.immediate(page);
      times.push(performance.now() - started);
    }
    return median(times);
  } finally {
    temp.done();
  }
}
