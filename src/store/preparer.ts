// Preparing pages of audit records (prepareRecords) off the main thread during a sync: validation,
// canonical JSON and SHA-256, time parsing and rule diffs were half of a backfill's main-thread time,
// and on a worker thread they overlap with fetching and with the SQLite writes. Results are the same
// pure function's, so the stored bytes and the hash chain do not depend on where a page was prepared.
// Small pages (a nightly run) are prepared in-thread: starting a worker costs more than they do.
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";
import { z } from "zod";
import { type PreparedRecord, prepareRecords, type TimeParser } from "./records.ts";

/** Pages with fewer records than this are prepared in-thread (and start no worker). */
export const WORKER_MIN_RECORDS = 500;

export interface Preparer {
  /** The page's records prepared, as prepareRecords returns them. Pages resolve in the order asked. */
  prepare(records: readonly unknown[]): Promise<PreparedRecord[]>;
  /** Stops the worker, if one was started. */
  close(): Promise<void>;
}

// The worker's answer; its records are prepareRecords' own output, passed back as they are.
const replySchema = z.union([
  z.object({ id: z.number().int(), prepared: z.array(z.custom<PreparedRecord>()) }),
  z.object({ id: z.number().int(), error: z.string() }),
]);

interface Job {
  records: readonly unknown[];
  resolve(prepared: PreparedRecord[]): void;
  reject(error: unknown): void;
}

/**
 * The worker's entry: compiled JavaScript as it is; from the TypeScript sources (tests, tsx) the
 * worker first registers tsx itself, because a worker does not inherit the loader hooks of its parent.
 */
function startWorker(): Worker {
  const source = import.meta.url.endsWith(".ts");
  const entry = new URL(source ? "./prepareWorker.ts" : "./prepareWorker.js", import.meta.url);
  // Its young generation small: it holds a page or two at a time (peak RSS of a sync, issue 14).
  const resourceLimits = { maxYoungGenerationSizeMb: 8 };
  if (!source) return new Worker(entry, { resourceLimits });
  const tsx = pathToFileURL(createRequire(import.meta.url).resolve("tsx/esm/api")).href;
  const boot = `import(${JSON.stringify(tsx)}).then((m) => { m.register(); return import(${JSON.stringify(entry.href)}); });`;
  return new Worker(boot, { eval: true, resourceLimits });
}

class WorkerPreparer implements Preparer {
  private worker: Worker | null = null;
  /** The worker failed: everything from then on, and what it still held, is prepared in-thread. */
  private broken = false;
  private nextId = 0;
  private readonly jobs = new Map<number, Job>();

  constructor(private readonly parseTime: TimeParser | undefined) {}

  prepare(records: readonly unknown[]): Promise<PreparedRecord[]> {
    // A custom time parser (tests) cannot cross to another thread.
    if (this.parseTime !== undefined || this.broken || records.length < WORKER_MIN_RECORDS) {
      return this.inThread(records);
    }
    const worker = this.ensureWorker();
    const id = this.nextId++;
    return new Promise<PreparedRecord[]>((resolve, reject) => {
      this.jobs.set(id, { records, resolve, reject });
      worker.postMessage({ id, records });
    });
  }

  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = null;
    if (worker) await worker.terminate();
    this.failOver();
  }

  private inThread(records: readonly unknown[]): Promise<PreparedRecord[]> {
    try {
      return Promise.resolve(prepareRecords(records, this.parseTime));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  private ensureWorker(): Worker {
    if (this.worker) return this.worker;
    const worker = startWorker();
    // Never keeps the process alive: a run closes it, and an abandoned one must not hang the CLI.
    worker.unref();
    worker.on("message", (message: unknown) => this.settle(message));
    worker.on("error", () => this.fail());
    worker.on("exit", () => this.fail());
    this.worker = worker;
    return worker;
  }

  private settle(message: unknown): void {
    const reply = replySchema.safeParse(message);
    if (!reply.success) {
      this.fail();
      return;
    }
    const job = this.jobs.get(reply.data.id);
    if (!job) return;
    this.jobs.delete(reply.data.id);
    if ("error" in reply.data) job.reject(new Error(reply.data.error));
    else job.resolve(reply.data.prepared);
  }

  /** The worker could not start or died: its pages are prepared here, in the order they were asked. */
  private fail(): void {
    if (this.worker === null) return;
    this.broken = true;
    this.worker = null;
    this.failOver();
  }

  private failOver(): void {
    const jobs = [...this.jobs.values()];
    this.jobs.clear();
    for (const job of jobs) this.inThread(job.records).then(job.resolve, job.reject);
  }
}

/** A preparer for one sync run; `parseTime` (tests) keeps every page in-thread. */
export function createPreparer(options: { parseTime?: TimeParser | undefined } = {}): Preparer {
  return new WorkerPreparer(options.parseTime);
}
