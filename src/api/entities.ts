// The three entity reads of the console API, through the same client (rate budget, retries) as the
// audit log. A 404 (deleted entity) and a 403 (key without the scope) are answers, not failures: the
// sync records them and goes on. Items that fail their schema are returned apart, never dropped.
import type { z } from "zod";
import { ApiError } from "../errors.ts";
import type { ConsoleApiClient } from "./consoleClient.ts";
import { configVersionSchema, experimentRecordSchema, metricRecordSchema } from "./entitySchemas.ts";
import { readListPages } from "./pager.ts";

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
}

/** What identifies an item within its list: a repeat (the list grew while paging) is dropped. */
const ITEM_KEY: Record<EntityKind, (record: { id: string; version?: unknown }) => string> = {
  config_versions: (record) => String(record.version),
  layer_experiments: (record) => record.id,
  event_metrics: (record) => record.id,
};

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
  const { signal, pageSize = ENTITY_PAGE_SIZE } = options;
  let pages: Awaited<ReturnType<typeof readListPages>>;
  try {
    pages = await readListPages((page, limit) => client.listPage(path, { page, limit }, signal), pageSize);
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

/** Every stored version of a dynamic config (addressed by its id, which the audit log gives as its name). */
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
