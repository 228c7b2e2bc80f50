// The OCSF mapping (docs/export.md): each stored audit record becomes one OCSF 1.3.0 Entity Management
// event (class 3004, ./ocsfRecords.ts), each control finding one Detection Finding (class 2004,
// ./ocsfFindings.ts). Pure functions; no SQL. The event shapes are zod schemas so that tests check a whole
// event against them; the types come from them. This module holds what both classes share.
import { z } from "zod";
import type { Severity } from "../controls/config.ts";
import { VERSION } from "../version.ts";

export const OCSF_VERSION = "1.3.0";
/** metadata.product: flagtrail delivers the events; the platform whose console wrote the audit log is the vendor. */
export const PRODUCT = { name: "flagtrail", vendor_name: "Statsig", version: VERSION } as const;

/** A control severity as OCSF's severity_id: low 2, medium 3, high 4 (1 Informational: no finding). */
export const SEVERITY_IDS: Readonly<Record<Severity, number>> = { low: 2, medium: 3, high: 4 };
export const SEVERITY_NAMES: Readonly<Record<number, string>> = {
  1: "Informational",
  2: "Low",
  3: "Medium",
  4: "High",
};

const productSchema = z.object({
  name: z.literal(PRODUCT.name),
  vendor_name: z.string(),
  version: z.string(),
});
export const metadataSchema = z.object({
  version: z.literal(OCSF_VERSION),
  product: productSchema,
  uid: z.string().min(1),
  tenant_uid: z.string().min(1),
  original_time: z.string().optional(),
  logged_time: z.number().int().optional(),
  sequence: z.number().int().optional(),
  event_code: z.string().optional(),
  log_name: z.string(),
});

/** Leaves out what is null or undefined: OCSF wants an attribute absent rather than null. */
export function present<T extends Record<string, unknown>>(
  object: T,
): { [K in keyof T]?: NonNullable<T[K]> } {
  return Object.fromEntries(Object.entries(object).filter(([, v]) => v !== null && v !== undefined)) as {
    [K in keyof T]?: NonNullable<T[K]>;
  };
}
