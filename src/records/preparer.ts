// Preparing a sync's pages (prepareRecords) on a worker thread, beside the main thread's fetching and
// SQLite writes: validation, canonical JSON + SHA-256, time parsing, rule diffs and cutting the raw texts
// were ~40 % of a backfill's main-thread CPU. The worker gets the page's response body (a string: cheap
// to pass) and parses it again; its answer is ./preparedWire.ts's compact form. The result is the same
// pure function's, so where a page was prepared never changes what is stored.
// Small pages (a nightly run), pages without their body, and a custom time parser stay in-thread.
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";
import { z } from "zod";
import type { PreparedRecord } from "./pageTally.ts";
import { prepareRecords, type TimeParser } from "./prepare.ts";
import { decodePrepared, type PreparedWire } from "./preparedWire.ts";

/** Pages with fewer records than this are prepared in-thread (and start no worker). */
export const WORKER_MIN_RECORDS = 500;

export interface Preparer {
  /** The page's records prepared, as prepareRecords returns them. */
  prepare(records: readonly unknown[], body: string | undefined): Promise<PreparedRecord[]>;
  /** Stops the worker, if one was started. */
  close(): Promise<void>;
}

const replySchema = z.union([
  z.object({
    id: z.number().int(),
    wire: z.object({
      numbers: z.instanceof(Float64Array),
      texts: z.string(),
      rare: z.array(z.custom<PreparedWire["rare"][number]>((v) => typeof v === "object" && v !== null)),
    }),
  }),
  z.object({ id: z.number().int(), error: z.string() }),
]);

interface Job {
  body: string;
  count: number;
  resolve(prepared: PreparedRecord[]): void;
  reject(error: unknown): void;
}

/**
 * The worker's entry: compiled JavaScript as it is; from the TypeScript sources (tests, tsx) the worker
 * registers tsx first, because a worker does not inherit its parent's loader hooks.
 */
function startWorker(): Worker {
  const source = import.meta.url.endsWith(".ts");
  const entry = new URL(source ? "./prepareWorker.ts" : "./prepareWorker.js", import.meta.url);
  // A small young generation: it holds a page or two at a time (a sync's peak RSS).
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

  constructor(
    private readonly parseTime: TimeParser | undefined,
    private readonly minRecords: number,
  ) {}

  prepare(records: readonly unknown[], body: string | undefined): Promise<PreparedRecord[]> {
    // A custom time parser (tests) cannot cross to another thread.
    if (
      body === undefined ||
      this.parseTime !== undefined ||
      this.broken ||
      records.length < this.minRecords
    ) {
      return inThread(() => prepareRecords(records, this.parseTime, body));
    }
    const worker = this.ensureWorker();
    const id = this.nextId++;
    const count = records.length;
    // The parsed records stay behind: the worker parses the body itself, and so would a failover.
    return new Promise<PreparedRecord[]>((resolve, reject) => {
      this.jobs.set(id, { body, count, resolve, reject });
      worker.postMessage({ id, body });
    });
  }

  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = null;
    if (worker) await worker.terminate();
    this.failOver();
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
    else {
      const { wire } = reply.data;
      settleWith(job, () => decodePrepared(wire, job.body, job.count));
    }
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
    for (const job of jobs) settleWith(job, () => preparedFromBody(job.body, this.parseTime));
  }
}

function inThread(work: () => PreparedRecord[]): Promise<PreparedRecord[]> {
  try {
    return Promise.resolve(work());
  } catch (error) {
    return Promise.reject(error);
  }
}

function settleWith(job: Job, work: () => PreparedRecord[]): void {
  inThread(work).then(job.resolve, job.reject);
}

/** A page prepared from its body alone, as the worker does (a failover). */
function preparedFromBody(body: string, parseTime: TimeParser | undefined): PreparedRecord[] {
  return prepareRecords(
    z.object({ data: z.array(z.unknown()) }).parse(JSON.parse(body)).data,
    parseTime,
    body,
  );
}

/**
 * A preparer for one sync run. `parseTime` (tests) keeps every page in-thread; `minRecords` is the
 * smallest page sent to the worker (Infinity: none).
 */
export function createPreparer(
  options: { parseTime?: TimeParser | undefined; minRecords?: number } = {},
): Preparer {
  return new WorkerPreparer(options.parseTime, options.minRecords ?? WORKER_MIN_RECORDS);
}
