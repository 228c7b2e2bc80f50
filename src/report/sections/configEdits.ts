// Config edits with their rule diffs.
import { mdText } from "../escape.ts";
import { type ComplianceContext, iterate, querySection, type TextFile, time } from "./markdown.ts";

interface ConfigEditRow {
  name: string;
  occurred_at: number;
  id: string;
  action_type: string;
  updated_by: string | null;
  change_log: string | null;
  rule_diff_summary: string | null;
  rule_id: string | null;
  rule_name: string | null;
  change: string | null;
  field: string | null;
  old_value: string | null;
  new_value: string | null;
  old_position: number | null;
  new_position: number | null;
}

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

export function writeConfigEdits(out: TextFile, ctx: ComplianceContext): void {
  out.line("## Config edits");
  out.line();
  let currentName: string | null = null;
  let currentId: string | null = null;
  let configs = 0;
  for (const row of iterate<ConfigEditRow>(ctx, "configEdits")) {
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
  if (configs === 0) out.line("No config edits in the period.");
  querySection(out, ctx, "configEdits");
}
