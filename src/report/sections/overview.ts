// Activity counts: by action type and by person.
import type { ActionTypeCount, PersonCount } from "../../store/reportQueries.ts";
import { mdTable, mdText } from "../escape.ts";
import { type ComplianceContext, heading, type MarkdownOut, querySection } from "./markdown.ts";

export async function writeActivity(
  out: MarkdownOut,
  ctx: ComplianceContext,
  byType: readonly ActionTypeCount[],
  byPerson: readonly PersonCount[],
): Promise<void> {
  heading(out, ctx, 2, "Activity by action type");
  out.line();
  if (byType.length === 0) out.line("No records in the period.");
  else {
    out.line(
      mdTable(
        ["Action type", "Category", "Records"],
        byType.map((r) => [mdText(r.action_type), mdText(r.category), String(r.records)]),
      ),
    );
  }
  querySection(out, ctx, "byActionType");

  heading(out, ctx, 2, "Activity by person");
  out.line();
  if (byPerson.length === 0) out.line("No records in the period.");
  else {
    out.line(
      mdTable(
        ["Person", "User id", "Email", "Records"],
        byPerson.map((r) => [
          mdText(r.updated_by),
          mdText(r.updated_by_user_id),
          mdText(r.email),
          String(r.records),
        ]),
      ),
    );
  }
  querySection(out, ctx, "byPerson");
}
