// The three entity reads of the console API, through the same client (rate budget, retries) as the
// audit log. A 404 (deleted entity) and a 403 (key without the scope) are answers, not failures: the
// sync records them and goes on. Items that fail their schema are returned apart, never dropped.
import type { z } from "zod";
import { ApiError } from "../errors.ts";
import type { ConsoleApiClient, ListPage } from "./consoleClient.ts";
import { configVersionSchema, experimentRecordSchema, metricRecordSchema } from "./entitySchemas.ts";
import { readListPages } from "./listPages.ts";

/** Items per request; the service documents no maximum and reports the size it used. */
const ENTITY_PAGE_SIZE = 100;

export type EntityKind = "config_versions" | "layer_experiments" | "event_metrics";

export interface InvalidItem {
  raw: unknown;
  /** Every zod issue, as quarantine stores them. */
  issues: { code: string; path: string[]; message: string }[];
}

export type EntityRead<T> =
  | { status: "ok"; items: { record: T; raw: unknown }[]; invalid: InvalidItem[]; requestPath: string }
  | { status: "not_found"; requestPath: string }
  | { status: "forbidden"; requestPath: string; message: string };

const PATHS: Record<EntityKind, (key: string) => string> = {
  config_versions: (id) => `/console/v1/dynamic_configs/${encodeURIComponent(id)}/versions`,
  layer_experiments: (id) => `/console/v1/layers/${encodeURIComponent(id)}/experiments`,
  event_metrics: (name) => `/console/v1/events/${encodeURIComponent(name)}/metrics`,
};

export interface EntityReadOptions {
  signal?: AbortSignal;
  /** Default ENTITY_PAGE_SIZE. */
  pageSize?: number;
  /**
   * Keys of the items the caller already holds (config versions: their numbers). Paging stops once
   * they and the items read account for the list's total: a long version history is not read again
   * whole for one new version, whatever order the service lists it in (the spec does not say).
   */
  known?: ReadonlySet<string>;
}

/** What identifies an item within its list: a repeat (the list grew while paging) is dropped. */
const ITEM_KEY: Record<EntityKind, (record: { id: string; version?: unknown }) => string> = {
  config_versions: (record) => String(record.version),
  layer_experiments: (record) => record.id,
  event_metrics: (record) => record.id,
};

/** Whether the known keys and those of the pages read so far add up to the list's whole total. */
function coveredWith(
  kind: EntityKind,
  schema: z.ZodType<{ id: string }>,
  known: ReadonlySet<string>,
): (pages: readonly ListPage[]) => boolean {
  const keys = new Set(known);
  let counted = 0;
  return (pages) => {
    for (const page of pages.slice(counted)) {
      for (const raw of page.items) {
        const parsed = schema.safeParse(raw);
        if (parsed.success) keys.add(ITEM_KEY[kind](parsed.data));
      }
    }
    counted = pages.length;
    const total = pages.at(-1)?.pagination.totalItems ?? Number.POSITIVE_INFINITY;
    return keys.size >= total;
  };
}

/** What an entity read needs of a client: its list pages (the sync passes one that counts them against a budget). */
export type EntityLister = Pick<ConsoleApiClient, "listPage">;

async function readEntity<S extends z.ZodType<{ id: string }>>(
  client: EntityLister,
  kind: EntityKind,
  key: string,
  schema: S,
  options: EntityReadOptions,
): Promise<EntityRead<z.infer<S>>> {
  const path = PATHS[kind](key);
  const { signal, pageSize = ENTITY_PAGE_SIZE, known } = options;
  const complete = known === undefined || known.size === 0 ? undefined : coveredWith(kind, schema, known);
  let pages: Awaited<ReturnType<typeof readListPages>>;
  try {
    pages = await readListPages(
      (page, limit) => client.listPage(path, { page, limit }, signal),
      pageSize,
      complete,
    );
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) return { status: "not_found", requestPath: path };
    if (error instanceof ApiError && error.status === 403) {
      return { status: "forbidden", requestPath: path, message: error.message };
    }
    throw error;
  }
  const items: { record: z.infer<S>; raw: unknown }[] = [];
  const invalid: InvalidItem[] = [];
  const seen = new Set<string>();
  for (const raw of pages.flatMap((page) => page.items)) {
    const parsed = schema.safeParse(raw);
    if (parsed.success) {
      const itemKey = ITEM_KEY[kind](parsed.data);
      if (!seen.has(itemKey)) items.push({ record: parsed.data, raw });
      seen.add(itemKey);
    } else
      invalid.push({
        raw,
        issues: parsed.error.issues.map((i) => ({
          code: i.code,
          path: i.path.map(String),
          message: i.message,
        })),
      });
  }
  return { status: "ok", items, invalid, requestPath: pages[0]?.requestPath ?? path };
}

/** Every stored version of a dynamic config (addressed by its id, which the audit log gives as its name), or those past `known`. */
export function listConfigVersions(client: EntityLister, configId: string, options: EntityReadOptions = {}) {
  return readEntity(client, "config_versions", configId, configVersionSchema, options);
}

/** The experiments of a layer as they are now. */
export function listLayerExperiments(client: EntityLister, layerId: string, options: EntityReadOptions = {}) {
  return readEntity(client, "layer_experiments", layerId, experimentRecordSchema, options);
}

/** The metrics derived from an event, with their lineage. */
export function listEventMetrics(client: EntityLister, eventName: string, options: EntityReadOptions = {}) {
  return readEntity(client, "event_metrics", eventName, metricRecordSchema, options);
}
