// Records the service sent again under the same id with different content.
import microdiff from "microdiff";
import { pathSuffix } from "../../diff/values.ts";
import { mdRow, mdText } from "../escape.ts";
import {
  batches,
  type ComplianceContext,
  HEADINGS,
  heading,
  type MarkdownOut,
  querySection,
  time,
} from "./markdown.ts";

/** Top-level paths that differ between the first stored version of a record and a later one. */
function changedPaths(original: string, revision: string): string {
  try {
    const a = JSON.parse(original) as unknown;
    const b = JSON.parse(revision) as unknown;
    if (a === null || b === null || typeof a !== "object" || typeof b !== "object") return "(whole record)";
    const paths = microdiff(a as Record<string, unknown>, b as Record<string, unknown>).map(
      (d) =>
        `${d.type === "CREATE" ? "+" : d.type === "REMOVE" ? "-" : "~"}${pathSuffix(d.path).replace(/^\./, "")}`,
    );
    return paths.join(", ");
  } catch {
    return "(not JSON)";
  }
}

export async function writeMutations(out: MarkdownOut, ctx: ComplianceContext): Promise<void> {
  heading(out, ctx, 2, HEADINGS.mutations);
  out.line();
  out.line(
    "The service sent these records again with the same id and different content. The store keeps the " +
      "first version in audit_logs and every later one in audit_log_revisions.",
  );
  out.line();
  let count = 0;
  for await (const batch of batches(ctx, "mutations")) {
    for (const row of batch) {
      if (count === 0) {
        out.line(
          mdRow(["Record id", "Entity", "Action type", "Record time", "Revision seen at", "Fields changed"]),
        );
        out.line(mdRow(["---", "---", "---", "---", "---", "---"]));
      }
      count += 1;
      out.line(
        mdRow([
          mdText(row.id),
          mdText(row.name),
          mdText(row.action_type),
          time(ctx, row.occurred_at),
          ctx.formatTime(row.seen_at),
          mdText(changedPaths(row.original, row.revision)),
        ]),
      );
    }
  }
  if (count === 0) out.line("None.");
  querySection(out, ctx, "mutations");
}
