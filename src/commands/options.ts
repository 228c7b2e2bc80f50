// Validates what commander collected (strings) with a zod schema; failures are usage errors (exit 2).
import { z } from "zod";
import { type Setting, SettingError, UsageError } from "../errors.ts";

export function parseOptions<S extends z.ZodType>(schema: S, input: unknown): z.infer<S> {
  const result = schema.safeParse(input, { error: optionMessage });
  if (result.success) return result.data;
  const first = result.error.issues[0];
  const where =
    first && first.path.length > 0
      ? `--${String(first.path[0]).replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}: `
      : "";
  throw new UsageError(`${where}${first?.message ?? "invalid input"}`);
}

/**
 * zod's own messages ("Invalid option: expected one of "low"|"medium"|"high"", "Too small: expected number
 * to be >=1") worded as the command line words the rest; a schema's own message takes precedence.
 */
function optionMessage(issue: z.core.$ZodRawIssue): string | undefined {
  const bound = (inclusive: boolean | undefined, at: string, beyond: string, limit: unknown) =>
    `must be ${inclusive === false ? beyond : at} ${String(limit)}`;
  if (issue.code === "invalid_value") {
    const values = issue.values.map(String);
    const list = values.length > 1 ? `${values.slice(0, -1).join(", ")} or ${values.at(-1)}` : values[0];
    return `expected ${list}, got ${JSON.stringify(issue.input)}`;
  }
  if (issue.code === "too_small" && issue.origin === "number")
    return bound(issue.inclusive, "at least", "more than", issue.minimum);
  if (issue.code === "too_big" && issue.origin === "number")
    return bound(issue.inclusive, "at most", "less than", issue.maximum);
  if (issue.code === "too_small" && issue.origin === "string" && Number(issue.minimum) === 1)
    return "must not be empty";
  return undefined;
}

/**
 * --db and --db-file, spread into the schema of every command that opens a store: declared once, so that
 * no schema strips --db-file and quietly falls back to the default store.
 */
export const storeOptionsShape = {
  db: z.string().optional(),
  dbFile: z.string().min(1).optional(),
};

/** The flag of each setting a command takes, by the name the engine gives the setting. */
export type SettingFlags = Partial<Record<Setting, string>>;

/**
 * `error` worded for the command line: a SettingError names its settings only (the engine never names
 * flags), so the flags that gave them are put first ("--a and --b" when they conflict), and the flag of
 * the setting that would accept the value (or give the missing one) closes the sentence. Anything else,
 * or a setting this command has no flag for, comes back unchanged.
 */
export function withFlagName(error: unknown, flags: SettingFlags): unknown {
  if (!(error instanceof SettingError)) return error;
  const named = error.settings.filter((s) => s !== error.remedy).map((setting) => flags[setting]);
  const remedy = error.remedy === undefined ? undefined : flags[error.remedy];
  if (named.some((flag) => flag === undefined) || (named.length === 0 && remedy === undefined)) return error;
  const prefix = named.length > 0 ? `${named.join(" and ")}: ` : "";
  const message = remedy === undefined ? error.message : `${error.message.replace(/\.$/, "")} (${remedy}).`;
  return new UsageError(`${prefix}${message}`, { cause: error });
}

/** Runs `work`, re-wording a refused setting with its flag (withFlagName). */
export function namingFlags<T>(flags: SettingFlags, work: () => T): T {
  try {
    return work();
  } catch (error) {
    throw withFlagName(error, flags);
  }
}

/** The flags of a period given as --from and --to. */
export const PERIOD_FLAGS: SettingFlags = { "start day": "--from", "end day": "--to", period: "--from/--to" };
