// Converts an event of another analytics product (Mixpanel-like `{event, properties}`) into the
// service's event shape, by the spec's five mapping rules:
//   1. event → event
//   2. properties.time (epoch seconds) → timestamp (milliseconds, seconds × 1000)
//   3. properties.distinct_id or properties.user_id → user.userID
//   4. properties.device_id → user.stableID
//   5. every other properties.* field → metadata
// Reading of rule 3 when both ids are present: distinct_id (named first) becomes userID; a user_id
// that differs from it is not the mapped field, so rule 5 keeps it in metadata and nothing is lost.
import { z } from "zod";
import { UsageError } from "../../errors.ts";
import type { FieldError } from "../entities/responses.ts";
import { fieldErrors } from "../entities/responses.ts";
import type { ServiceEvent } from "./serviceEvent.ts";
import { serviceEventSchema } from "./serviceEvent.ts";

const identity = (field: string) =>
  z
    .union([z.string(), z.number().finite()], { error: `${field} must be a string or a number` })
    .nullish()
    // Numeric ids are common in that product; the service wants strings. Empty means absent.
    .transform((value) =>
      value === null || value === undefined || value === "" ? undefined : String(value),
    );

const analyticsEventSchema = z.object({
  event: z
    .string({ error: "event must be a string" })
    .refine((text) => text.trim() !== "", { error: "event must not be empty" }),
  properties: z.looseObject(
    {
      time: z
        .number({ error: "properties.time must be a number (epoch seconds)" })
        .finite({ error: "properties.time must be a number (epoch seconds)" })
        .nonnegative({ error: "properties.time must not be negative" }),
      distinct_id: identity("properties.distinct_id"),
      user_id: identity("properties.user_id"),
      device_id: identity("properties.device_id"),
    },
    { error: "properties must be an object" },
  ),
});

/** The input could not be converted; `errors` names every bad field. */
export class EventConversionError extends UsageError {
  constructor(readonly errors: FieldError[]) {
    super(`Cannot convert event: ${errors.map((e) => `${e.property}: ${e.message}`).join("; ")}`);
  }
}

const MAPPED = new Set(["time", "distinct_id", "user_id", "device_id"]);

export function convertAnalyticsEvent(input: unknown): ServiceEvent {
  const parsed = analyticsEventSchema.safeParse(input);
  if (!parsed.success) throw new EventConversionError(fieldErrors(parsed.error));
  const { event, properties } = parsed.data;

  const metadata: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(properties)) {
    if (!MAPPED.has(key)) metadata[key] = value;
  }
  const userID = properties.distinct_id ?? properties.user_id;
  if (properties.user_id !== undefined && properties.user_id !== userID) {
    metadata.user_id = properties.user_id;
  }
  const user: { userID?: string; stableID?: string } = {};
  if (userID !== undefined) user.userID = userID;
  if (properties.device_id !== undefined) user.stableID = properties.device_id;

  if (user.userID === undefined && user.stableID === undefined) {
    throw new EventConversionError([
      { property: "properties", message: "needs distinct_id, user_id or device_id to name the user" },
    ]);
  }
  // Fractional seconds exist in the wild; the service wants whole milliseconds.
  const candidate = { event, user, timestamp: Math.round(properties.time * 1000), metadata };
  const checked = serviceEventSchema.safeParse(candidate);
  if (!checked.success) throw new EventConversionError(fieldErrors(checked.error));
  return checked.data;
}
