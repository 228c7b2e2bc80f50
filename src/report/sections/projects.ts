// The top of a compliance report over several projects: which projects it covers and, per project,
// how complete its records of the period are, from the same figures each project's own summary and
// completeness section show below it.

import { mdTable, mdText } from "../escape.ts";
import type { ManifestStoreState } from "../manifest.ts";
import { type Completeness, completenessVerdict } from "./completeness.ts";
import { type ComplianceContext, headingSlug, type MarkdownOut, projectHeading } from "./markdown.ts";

export interface ProjectOverview {
  ctx: ComplianceContext;
  store: ManifestStoreState;
  summary: { records: number; completeness: Completeness };
}

function chainHeadText(head: ManifestStoreState["chainHead"]): string {
  return head === null ? "none (no records)" : `seq ${head.seq}, ${head.chainHash.slice(0, 12)}`;
}

export function writeProjectsOverview(out: MarkdownOut, projects: readonly ProjectOverview[]): void {
  const { period } = projects[0]!.ctx;
  const names = projects.map((p) => mdText(p.ctx.project?.name ?? ""));
  out.line(`# Compliance report ${period.from} to ${period.to}`);
  out.line();
  out.line(
    `This report covers the ${projects.length} projects of the store: ${names.join(", ")}. Each project's ` +
      "history is kept apart (its own records, hash chain and completeness checks), so each has a section of " +
      "its own below, the report `flagtrail report --project <name>` writes for it alone. The CSVs hold every " +
      "project's rows, one project after the other, named in their first column (project); the manifest gives " +
      "each project's stored records and chain head.",
  );
  out.line();
  out.line("## Projects");
  out.line();
  out.line(
    `Period ${period.from} to ${period.to}, both days included, in ${mdText(period.timeZone)}. ` +
      "Server days: those the period overlaps, checked (coverage data fetched by a sync) and complete (the " +
      "local count equals the server's total); a gap is a server day whose counts differ.",
  );
  out.line();
  out.line(
    mdTable(
      [
        "Project",
        "Records in period",
        "Server days checked",
        "Server days complete",
        "Gap days",
        "Chain head",
        "Completeness",
      ],
      projects.map(({ ctx, store, summary }) => {
        const name = ctx.project?.name ?? "";
        const c = summary.completeness;
        return [
          `[${mdText(name)}](#${headingSlug(projectHeading(name))})`,
          String(summary.records),
          `${c.covered.length} of ${c.days.length}`,
          String(c.matching.length),
          String(new Set(c.gaps.map((g) => g.day)).size),
          chainHeadText(store.chainHead),
          completenessVerdict(c),
        ];
      }),
    ),
  );
  out.line();
}
