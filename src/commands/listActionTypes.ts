// `flagtrail action-types`: the action types the specification lists (the ones --action-type accepts),
// each with the category the views and reports give it and, for the others, the reason class that
// says why it is in neither view.
import { z } from "zod";
import { ACTION_TYPE_CATEGORIES, type Category, OTHER_ACTION_TYPES } from "../api/actionCategories.ts";
import { AUDIT_ACTION_TYPES } from "../api/actionTypes.ts";
import { parseOptions } from "./options.ts";

const CATEGORIES = ["experiment_state_change", "config_edit", "other"] as const;

const optionsSchema = z.object({
  category: z
    .enum(CATEGORIES, { message: "expected experiment_state_change, config_edit or other" })
    .optional(),
  format: z.enum(["table", "json"], { message: "expected table or json" }).default("table"),
});

export interface ActionTypeRow {
  actionType: string;
  category: Category;
  /** The reason class of an `other` type (src/api/otherActionTypes/), null for the two view categories. */
  otherClass: string | null;
}

/** Every action type of the specification, in its order, with its category. */
export function actionTypeRows(category?: Category): ActionTypeRow[] {
  const classOf = new Map<string, string>();
  for (const [name, group] of Object.entries(OTHER_ACTION_TYPES))
    for (const type of group.actionTypes) classOf.set(type, name);
  return AUDIT_ACTION_TYPES.map((actionType) => ({
    actionType,
    // categories.test.ts proves every listed type has a category.
    category: ACTION_TYPE_CATEGORIES.get(actionType) ?? "other",
    otherClass: classOf.get(actionType) ?? null,
  })).filter((row) => category === undefined || row.category === category);
}

export function formatActionTypeTable(rows: readonly ActionTypeRow[]): string {
  const header = ["action_type", "category", "class"];
  const cells = rows.map((r) => [r.actionType, r.category, r.otherClass ?? ""]);
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]?.length ?? 0)));
  const line = (c: readonly string[]) =>
    c
      .map((v, i) => v.padEnd(widths[i] ?? 0))
      .join("  ")
      .trimEnd();
  return `${[line(header), line(widths.map((w) => "-".repeat(w))), ...cells.map(line)].join("\n")}\n`;
}

export async function action(raw: Record<string, unknown>): Promise<void> {
  const options = parseOptions(optionsSchema, raw);
  const rows = actionTypeRows(options.category);
  process.stdout.write(
    options.format === "json" ? `${JSON.stringify(rows, null, 2)}\n` : formatActionTypeTable(rows),
  );
}
