// What the compliance Markdown's sections share: the buffered file writer, the context they read
// from, and the helpers that run a section's query and print it after the section.
import { closeSync, fchmodSync, fsyncSync, openSync, writeSync } from "node:fs";
import { formatSqlParams } from "../../sql/params.ts";
import {
  type CoverageRow,
  type ReportParams,
  type ReportQueryName,
  type ReportRows,
  type ReportSnapshot,
  reportQuery,
} from "../../store/reportQueries.ts";
import { mdText } from "../escape.ts";
import type { Period } from "../period.ts";
import type { ServerDays } from "../serverDays.ts";
import type { ControlsRead } from "./controls.ts";
import type { EntityFold } from "./entities.ts";

/** The headings the summary links to: their anchors are derived from these words (headingSlug). */
export const HEADINGS = {
  completeness: "Completeness",
  unreviewed: "Changes with no approved review before them",
  selfApprovals: "Reviews approved by their own author",
  rejected: "Rejected reviews",
  mutations: "Records mutated under the same id",
} as const;

/** A heading's anchor as GitHub (and GitLab, VS Code…) derives it: lower case, punctuation dropped, spaces to hyphens. */
export function headingSlug(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, "")
    .replace(/ /g, "-");
}

/** Appends text to a file through a 64 KiB buffer: bounded memory, few system calls. */
export class TextFile {
  private readonly fd: number;
  private chunks: string[] = [];
  private size = 0;

  constructor(path: string) {
    this.fd = openSync(path, "w", 0o600);
    // The mode above applies only when the file is new, and the umask could narrow it only.
    fchmodSync(this.fd, 0o600);
  }

  write(text: string): void {
    this.chunks.push(text);
    this.size += text.length;
    if (this.size >= 65_536) this.flush();
  }

  line(text = ""): void {
    this.write(`${text}\n`);
  }

  flush(): void {
    if (this.chunks.length === 0) return;
    writeSync(this.fd, this.chunks.join(""));
    this.chunks = [];
    this.size = 0;
  }

  /** Flushes, makes the bytes durable (the report set is published only after) and closes. */
  close(): void {
    try {
      this.flush();
      fsyncSync(this.fd);
    } finally {
      closeSync(this.fd);
    }
  }
}

/**
 * The compliance Markdown as written by its sections: one pass over the rows, two documents. `capped` is
 * the published Markdown, whose long tables show only the rows MARKDOWN_CAPS keeps (sections/capped.ts);
 * `complete` is the same document with every row, the one the HTML is rendered from. Either is absent
 * when its format was not asked for. `line` and `write` go to both.
 */
/** The files of MarkdownOut's two documents: null for one not asked for. */
export interface MarkdownPaths {
  capped: string | null;
  complete: string | null;
}

export class MarkdownOut {
  constructor(
    readonly capped: TextFile | null,
    readonly complete: TextFile | null,
  ) {}

  /** Opens the documents asked for (a path each, or null). */
  static open(paths: MarkdownPaths): MarkdownOut {
    const capped = paths.capped === null ? null : new TextFile(paths.capped);
    try {
      return new MarkdownOut(capped, paths.complete === null ? null : new TextFile(paths.complete));
    } catch (error) {
      capped?.close();
      throw error;
    }
  }

  write(text: string): void {
    this.capped?.write(text);
    this.complete?.write(text);
  }

  line(text = ""): void {
    this.write(`${text}\n`);
  }

  close(): void {
    try {
      this.capped?.close();
    } finally {
      this.complete?.close();
    }
  }
}

export interface ComplianceContext {
  snapshot: ReportSnapshot;
  period: Period;
  /** The server days the period overlaps (coverage is per server day); null without dated records. */
  serverDays: ServerDays | null;
  actionTypes: readonly string[] | null;
  params: ReportParams;
  formatTime: (epochMs: number) => string;
  generatedAt: string;
  version: string;
  /** A warning the report's first lines carry (a period no sync covered). */
  notice?: string | null;
  /**
   * The coverage rows of the period's server days, as the notice read them from this snapshot: the
   * completeness section and the controls take them instead of recounting (~0.4 s a read over 300k
   * records). Absent: read when needed.
   */
  coverage?: readonly CoverageRow[] | null;
  /**
   * The unreviewed changes as their CSV was written from this snapshot: their count and their per-entity
   * table, which the review section then takes instead of running their query (the report's dearest, a
   * window over two months) twice more. Absent when no CSV was written.
   */
  unreviewedFromCsv?: { count: number; entities: EntityFold } | null;
  /**
   * The per-entity tables of experiment state changes and config edits, folded from their CSVs' rows
   * (the same rows their summary queries group): the month's changes are then read once, not twice.
   * Absent when no CSV was written.
   */
  summariesFromCsv?: Readonly<Record<"experimentSummary" | "configSummary", EntityFold>> | null;
  /**
   * Set when this document is one project's section of a report over several projects: its title
   * becomes the project's heading, every heading goes one level down, and its links point at its own
   * headings (`index`: how many projects' sections come before it).
   */
  project?: { name: string; index: number } | null;
  /**
   * The names of this report set's change CSVs, when it has them: a capped table names the one that holds
   * all its rows.
   */
  csvFiles?: { experimentStateChanges: string; configEdits: string } | null;
  /** The config's controls judged over the period: the document then opens with them. */
  controls?: ControlsRead | null;
}

/** The heading of a project's section (its document's title, a level down): the overview links to it. */
export function projectHeading(name: string): string {
  return `Project ${mdText(name)}`;
}

/** A heading of `level` (1 = the document's title), one level lower in a project's section. */
export function heading(out: MarkdownOut, ctx: ComplianceContext, level: number, text: string): void {
  out.line(`${"#".repeat(level + (ctx.project ? 1 : 0))} ${text}`);
}

/**
 * The anchor of one of HEADINGS in this document. Each project's section repeats them, and a repeated
 * heading's anchor is its slug with -1, -2… (GitHub's rule, which html/body.ts follows too).
 */
export function anchor(ctx: ComplianceContext, text: string): string {
  const index = ctx.project?.index ?? 0;
  return `#${headingSlug(text)}${index > 0 ? `-${index}` : ""}`;
}

export function run<N extends ReportQueryName>(
  ctx: Pick<ComplianceContext, "snapshot" | "params">,
  name: N,
): Promise<ReportRows[N][]> {
  return ctx.snapshot.rows(name, ctx.params);
}

/** A long section's rows a batch at a time: `for await (const batch of …) for (const row of batch)`. */
export function batches<N extends ReportQueryName>(
  ctx: ComplianceContext,
  name: N,
): AsyncIterable<readonly ReportRows[N][]> {
  return ctx.snapshot.batches(name, ctx.params);
}

/**
 * The queries behind a section, each as its one text (it runs on either engine: the same Markdown from
 * both), with its parameters in the form `flagtrail sql --param` takes them.
 */
export function querySection(out: MarkdownOut, ctx: ComplianceContext, ...names: ReportQueryName[]): void {
  out.line();
  out.line(`<details><summary>Query</summary>`);
  for (const name of names) {
    const { sql, params } = reportQuery(name, ctx.params);
    out.line();
    out.line("```sql");
    out.line(sql);
    out.line("```");
    if (Object.keys(params).length > 0) {
      out.line();
      out.line("Parameters, as `flagtrail sql` takes them before the query:");
      out.line();
      out.line("```sh");
      out.line(formatSqlParams(params));
      out.line("```");
    }
  }
  out.line();
  out.line("</details>");
  out.line();
}

export function time(ctx: ComplianceContext, epochMs: number | null): string {
  return epochMs === null ? "(unknown time)" : ctx.formatTime(epochMs);
}
