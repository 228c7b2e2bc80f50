// zod schemas of the entity records the sync stores beside the audit log: dynamic config versions, a
// layer's experiments, an event's metrics. Loose objects (unknown fields kept: the raw JSON is what is
// stored and hashed); required only what the store keys on or the reports read.
import { z } from "zod";

/** One stored version of a dynamic config ("Dynamic config version record" in the spec). */
export const configVersionSchema = z.looseObject({
  id: z.string().min(1),
  name: z.string(),
  version: z.number().int().min(0),
  /** Epoch ms: links the version to the audit record of the same second. */
  lastModifiedTime: z.number().int(),
  lastModifierID: z.string().nullish(),
  lastModifierName: z.string().nullish(),
  description: z.string().nullish(),
  isEnabled: z.boolean().optional(),
  defaultValue: z.record(z.string(), z.unknown()).nullish(),
  rules: z.array(z.unknown()).optional(),
  tags: z.array(z.string()).nullish(),
});

/** An experiment as a layer lists it; the fields the timeline's last line shows. */
export const experimentRecordSchema = z.looseObject({
  id: z.string().min(1),
  name: z.string(),
  status: z.string().min(1),
  layerID: z.string().nullish(),
  startTime: z.number().nullish(),
  endTime: z.number().nullish(),
  decisionReason: z.string().nullish(),
  launchedGroupID: z.string().nullish(),
  lastModifiedTime: z.number().nullish(),
  groups: z.array(z.looseObject({ id: z.string().nullish(), name: z.string() })).optional(),
});

/** A metric derived from (or depending on) an event, with its lineage. */
export const metricRecordSchema = z.looseObject({
  id: z.string().min(1),
  name: z.string(),
  type: z.string(),
  lineage: z
    .looseObject({ events: z.array(z.string()).default([]), metrics: z.array(z.string()).default([]) })
    .nullish(),
});
