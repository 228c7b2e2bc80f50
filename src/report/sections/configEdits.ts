// Config edits with their rule diffs.
import type { ConfigEditRow } from "../../store/reportQueries.ts";
import { mdText } from "../escape.ts";
import { batches, type ComplianceContext, querySection, type TextFile, time } from "./markdown.ts";

function describeRuleChange(row: ConfigEditRow): string {
  const rule = `rule ${mdText(JSON.stringify(row.rule_name ?? row.rule_id))}`;
  switch (row.change) {
    case "added":
      return `${rule} added at position ${row.new_position}`;
    case "removed":
      return `${rule} removed from position ${row.old_position}`;
    case "moved":
      return `${rule} moved from position ${row.old_position} to ${row.new_position}`;
    default:
      return `${rule} ${mdText(row.field)}: ${mdText(row.old_value ?? "(none)")} → ${mdText(row.new_value ?? "(none)")}`;
  }
}

export async function writeConfigEdits(out: TextFile, ctx: ComplianceContext): Promise<void> {
  out.line("## Config edits");
  out.line();
  let currentName: string | null = null;
  let currentId: string | null = null;
  let configs = 0;
  for await (const batch of batches(ctx, "configEdits")) {
    for (const row of batch) {
      if (row.name !== currentName) {
        if (currentName !== null) out.line();
        currentName = row.name;
        currentId = null;
        configs += 1;
        out.line(`### ${mdText(row.name) || "(no name)"}`);
        out.line();
      }
      if (row.id !== currentId) {
        currentId = row.id;
        const log = row.change_log ? `: ${mdText(row.change_log)}` : "";
        out.line(
          `- ${time(ctx, row.occurred_at)} ${mdText(row.action_type)} by ${mdText(row.updated_by) || "(unknown)"}${log}`,
        );
        if (row.rule_diff_summary) out.line(`  - Rule diff: ${mdText(row.rule_diff_summary)}`);
      }
      if (row.change) out.line(`    - ${describeRuleChange(row)}`);
    }
  }
  if (configs === 0) out.line("No config edits in the period.");
  querySection(out, ctx, "configEdits");
}
