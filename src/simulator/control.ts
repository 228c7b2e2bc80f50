// The in-process control handle and the loopback-only `/_sim/` routes that expose the same powers
// over HTTP, for tests that drive a simulator they did not start themselves.
import { z } from "zod";
import type { AuditStore } from "./auditStore.ts";
import type { Counters, SimCounters } from "./counters.ts";
import type { FaultEngine, QueuedFault } from "./faults.ts";
import type { HistoryGenerator } from "./history/generator.ts";
import { type Faults, type FaultsInput, faultsSchema } from "./options.ts";
import { badRequest, notFound } from "./responses.ts";
import type { SimAuditRecord, SimRequest, SimResponse, SimRoute } from "./types.ts";

const appendInputSchema = z.object({
  /** Epoch ms; default: the simulator clock's now (never older than the newest record). */
  at: z.number().int().optional(),
  /** Default: a fresh 22-character id. */
  id: z.string().min(1).optional(),
  name: z.string(),
  actionType: z.string().min(1),
  changeLog: z.string().default(""),
  /** Default: the first generated updater. */
  actor: z.object({ id: z.string(), name: z.string(), email: z.string() }).optional(),
  changes: z.record(z.string(), z.unknown()).optional(),
  tags: z.array(z.string()).optional(),
});
export type AppendInput = z.input<typeof appendInputSchema>;

const queuedFaultSchema = z.enum(["serverError", "reset", "truncate", "rateLimit"]);

export interface SimulatorControl {
  /** Appends records (at the newest end unless `at` is older: then in time order). */
  append(entries: AppendInput[]): SimAuditRecord[];
  /** Changes fields of a record under its existing id; undefined when the id is unknown. */
  mutate(id: string, patch: Record<string, unknown>): SimAuditRecord | undefined;
  /** Appends `count` generated records at the newest end, stamped now. */
  insertAtHead(count: number): SimAuditRecord[];
  get(id: string): SimAuditRecord | undefined;
  size(): number;
  counters(): SimCounters;
  resetCounters(): void;
  faults(): Faults;
  /** Replaces the fault settings; omitted fields are off. */
  setFaults(faults: FaultsInput): Faults;
  /** One-shot faults for the next API requests, in order. */
  queueFaults(faults: QueuedFault[]): void;
  /** The simulator clock (epoch ms). */
  now(): number;
  advanceClock(ms: number): void;
}

export interface ControlDeps {
  store: AuditStore;
  generator: HistoryGenerator;
  counters: Counters;
  faults: FaultEngine;
  now: () => number;
  advanceClock: (ms: number) => void;
}

export function createControl(deps: ControlDeps): SimulatorControl {
  const { store, generator } = deps;
  return {
    append(entries) {
      return entries.map((input) => {
        const entry = appendInputSchema.parse(input);
        const at = entry.at ?? Math.max(deps.now(), store.newestAt ?? 0);
        const record = store.append({
          id: entry.id ?? generator.recordId(store),
          at,
          name: entry.name,
          actionType: entry.actionType,
          changeLog: entry.changeLog,
          actor: entry.actor ?? generator.actors[0]!,
          ...(entry.changes === undefined ? {} : { changes: entry.changes }),
          ...(entry.tags === undefined ? {} : { tags: entry.tags }),
        });
        return store.render(record);
      });
    },
    mutate(id, patch) {
      const record = store.mutate(id, patch);
      return record === undefined ? undefined : store.render(record);
    },
    insertAtHead(count) {
      return generator.extend(store, count, deps.now()).map((r) => store.render(r));
    },
    get(id) {
      const record = store.get(id);
      return record === undefined ? undefined : store.render(record);
    },
    size: () => store.size,
    counters: () => deps.counters.snapshot(),
    resetCounters: () => deps.counters.reset(),
    faults: () => deps.faults.current,
    setFaults: (faults) => deps.faults.set(faults),
    queueFaults: (faults) => deps.faults.enqueue(faults),
    now: deps.now,
    advanceClock: deps.advanceClock,
  };
}

function ok(data: unknown): SimResponse {
  return { status: 200, body: { message: "OK", data } };
}

/** Validates a control body; a 400 names every bad field. */
function parseBody<S extends z.ZodType>(schema: S, body: unknown): z.infer<S> | SimResponse {
  const parsed = schema.safeParse(body ?? {});
  if (parsed.success) return parsed.data;
  return badRequest(
    parsed.error.issues.map((issue) => ({
      property: issue.path.map(String).join(".") || "body",
      message: issue.message,
    })),
  );
}

const isResponse = (value: unknown): value is SimResponse =>
  typeof value === "object" && value !== null && "status" in value && "body" in value;

export function controlRoutes(control: SimulatorControl): SimRoute[] {
  const route = (
    method: "GET" | "POST",
    pattern: RegExp,
    handle: (request: SimRequest, params: string[]) => SimResponse,
  ): SimRoute => ({ method, pattern, auth: "console", handle });

  return [
    route("GET", /^\/_sim\/counters$/, () => ok(control.counters())),
    route("POST", /^\/_sim\/counters\/reset$/, () => {
      control.resetCounters();
      return ok(control.counters());
    }),
    route("GET", /^\/_sim\/state$/, () => ok({ records: control.size(), now: control.now() })),
    route("POST", /^\/_sim\/records$/, (request) => {
      const body = parseBody(z.object({ records: z.array(appendInputSchema).min(1) }), request.body);
      if (isResponse(body)) return body;
      return ok(control.append(body.records));
    }),
    route("GET", /^\/_sim\/records\/([^/]+)$/, (_request, [id]) => {
      const record = control.get(id!);
      return record === undefined ? notFound() : ok(record);
    }),
    route("POST", /^\/_sim\/records\/([^/]+)$/, (request, [id]) => {
      const body = parseBody(z.record(z.string(), z.unknown()), request.body);
      if (isResponse(body)) return body;
      const record = control.mutate(id!, body);
      return record === undefined ? notFound() : ok(record);
    }),
    route("POST", /^\/_sim\/head_insert$/, (request) => {
      const body = parseBody(z.object({ count: z.number().int().min(1).max(100_000) }), request.body);
      if (isResponse(body)) return body;
      return ok(control.insertAtHead(body.count));
    }),
    route("GET", /^\/_sim\/faults$/, () => ok(control.faults())),
    route("POST", /^\/_sim\/faults$/, (request) => {
      const body = parseBody(faultsSchema, request.body);
      if (isResponse(body)) return body;
      return ok(control.setFaults(body));
    }),
    route("POST", /^\/_sim\/faults\/queue$/, (request) => {
      const body = parseBody(z.object({ faults: z.array(queuedFaultSchema).min(1) }), request.body);
      if (isResponse(body)) return body;
      control.queueFaults(body.faults);
      return ok(control.faults());
    }),
    route("POST", /^\/_sim\/clock$/, (request) => {
      const body = parseBody(z.object({ advanceMs: z.number().int().min(0) }), request.body);
      if (isResponse(body)) return body;
      control.advanceClock(body.advanceMs);
      return ok({ now: control.now() });
    }),
  ];
}
