// The action-type filter as the commands take it (sync, daemon, report): one check, so that a typo is
// refused the same way wherever it is typed.
import { distance } from "fastest-levenshtein";
import { z } from "zod";
import { AUDIT_ACTION_TYPES } from "../api/actionTypes.ts";
import { UsageError } from "../errors.ts";

/** `--action-type`, repeated or comma-separated (`a,b`), as every command takes it. */
export const actionTypeListOption = z
  .array(z.string())
  .default([])
  .transform((list) =>
    list
      .flatMap((t) => t.split(","))
      .map((t) => t.trim())
      .filter(Boolean),
  )
  .pipe(z.array(z.string().regex(/^[A-Za-z0-9_]+$/, { message: "an action type is letters, digits and _" })));

const KNOWN_TYPES = new Set<string>(AUDIT_ACTION_TYPES);

/** Unknown action types are usage errors naming the closest valid ones (unless allowed). */
export function checkActionTypes(types: readonly string[], allowUnknown: boolean): void {
  if (allowUnknown) return;
  for (const type of types) {
    if (KNOWN_TYPES.has(type)) continue;
    const suggestions = AUDIT_ACTION_TYPES.map((candidate) => ({ candidate, d: distance(type, candidate) }))
      .sort((a, b) => a.d - b.d || a.candidate.localeCompare(b.candidate))
      .slice(0, 3)
      .map((n) => n.candidate);
    throw new UsageError(
      `Unknown action type "${type}"; closest valid: ${suggestions.join(", ")} (or pass --allow-unknown-action-types).`,
    );
  }
}
