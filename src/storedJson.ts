// A value kept as JSON text (a meta value: a digest, a sync plan, a backfill mark), read back through its
// schema: what cannot be read is treated as absent, never as an error.
import type { z } from "zod";

/** `text` parsed and checked by `schema`; null when missing, not JSON, or not what the schema takes. */
export function parseStoredJson<T>(schema: z.ZodType<T>, text: string | null | undefined): T | null {
  if (text === null || text === undefined) return null;
  try {
    const parsed = schema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}
