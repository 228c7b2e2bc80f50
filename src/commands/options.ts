// Validates what commander collected (strings) with a zod schema; failures are usage errors (exit 2).
import { z } from "zod";
import { UsageError } from "../errors.ts";

export function parseOptions<S extends z.ZodType>(schema: S, input: unknown): z.infer<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const first = result.error.issues[0];
  const where =
    first && first.path.length > 0
      ? `--${String(first.path[0]).replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}: `
      : "";
  throw new UsageError(`${where}${first?.message ?? "invalid input"}`);
}

/**
 * --db and --db-file, spread into the schema of every command that opens a store: declared once, so that
 * no schema strips --db-file and quietly falls back to the default store.
 */
export const storeOptionsShape = {
  db: z.string().optional(),
  dbFile: z.string().min(1).optional(),
};
