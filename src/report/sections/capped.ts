// The published compliance Markdown is the readable summary: its long descriptive tables show their most
// relevant rows, say above and below how many of how many, and name the file or query holding them all.
// The CSVs stay complete, and so does the HTML (rendered from the complete document, MarkdownOut).
// Findings are never capped here (a long list of unreviewed changes is summarised per entity instead:
// FINDINGS_LISTED_IN_FULL in ./reviews.ts).
import { mdRow } from "../escape.ts";
import type { ComplianceContext, MarkdownOut } from "./markdown.ts";

/**
 * The caps, in one place. The demo's month (about 4,300 records; the simulated history moves with the
 * date) has 120–140 edited configs, 50–80 experiments with state changes and 50–100 config edits with a
 * before → after: uncapped, about 140 KB of Markdown, 44 KB of it the per-config table; capped, about
 * 85 KB (before the Controls section the demo's report opens with, its findings listed up to 100 per
 * control: 56 KB more in October 2026). 20 entities (about 40% of the demo's config edits) and 30 edits keep each table a screen or
 * two while still showing where the activity was.
 */
export const MARKDOWN_CAPS = {
  /** Per-experiment and per-config tables, experiment timelines: the entities with the most changes. */
  entities: 20,
  /** Config edits before → after: the most recent. */
  configEditVersions: 30,
} as const;

/** A row as it came: `index` is its place in the table's own order. */
export interface Ranked<T> {
  item: T;
  index: number;
}

/** Which rows a capped table keeps and how it shows them. */
export interface Cap<T> {
  rows: number;
  /** Negative when `a` is more relevant than `b`: the cap keeps the first `rows` in this order. */
  rank: (a: Ranked<T>, b: Ranked<T>) => number;
  /** The rows of a table past its cap: most relevant first, or in the table's own order. */
  show: "ranked" | "ordered";
}

export interface CappedTableSpec<T> {
  header: readonly string[];
  /** null: every row in both documents (a finding's table). */
  cap: Cap<T> | null;
  render: (item: T) => string;
}

/** What a cap's notes say: before the table, and after it. */
export interface CapNote {
  before: string;
  after: string;
}

function writeHeader(file: { line(text: string): void }, cells: readonly string[]): void {
  file.line(mdRow(cells));
  file.line(mdRow(cells.map(() => "---")));
}

/**
 * A table written to both documents from rows that come one at a time: the complete one gets each row as
 * it comes, the capped one, at `end`, the most relevant rows (only those are held: memory stays bounded),
 * with a note before and after when rows were left out. A table within its cap is the same in both,
 * without a note.
 */
export class CappedTable<T> {
  private readonly kept: Ranked<T>[] = [];
  private total = 0;

  constructor(
    private readonly out: MarkdownOut,
    private readonly spec: CappedTableSpec<T>,
  ) {}

  add(item: T): void {
    const { cap, header, render } = this.spec;
    // Uncapped, or no capped document: the row goes where it goes now.
    const now = cap === null || this.out.capped === null ? this.out : this.out.complete;
    if (now) {
      if (this.total === 0) writeHeader(now, header);
      now.line(render(item));
    }
    const ranked = { item, index: this.total };
    this.total += 1;
    if (cap !== null && this.out.capped) this.keep(ranked, cap);
  }

  /** Inserts in rank order (binary search), dropping the least relevant past the cap. */
  private keep(ranked: Ranked<T>, { rows, rank }: Cap<T>): void {
    const { kept } = this;
    if (kept.length === rows && (rows === 0 || rank(ranked, kept[rows - 1]!) >= 0)) return;
    let low = 0;
    let high = kept.length;
    while (low < high) {
      const mid = (low + high) >> 1;
      if (rank(kept[mid]!, ranked) <= 0) low = mid + 1;
      else high = mid;
    }
    kept.splice(low, 0, ranked);
    if (kept.length > rows) kept.pop();
  }

  /**
   * Writes the capped document's table, between the notes when rows were left out (`note` gets the rows
   * shown and the table's size). Returns the table's size: 0 when nothing was written.
   */
  end(note: (shown: readonly T[], total: number) => CapNote): number {
    const { capped } = this.out;
    const { cap, header, render } = this.spec;
    if (cap === null || capped === null || this.total === 0) return this.total;
    // Within its cap, a table is the complete one's, in its own order.
    const ranked = cap.show === "ranked" && this.total > cap.rows;
    const rows = ranked ? this.kept : [...this.kept].sort((a, b) => a.index - b.index);
    const shown = rows.map((r) => r.item);
    const notes = this.total > shown.length ? note(shown, this.total) : null;
    if (notes) capped.write(`${notes.before}\n\n`);
    writeHeader(capped, header);
    for (const item of shown) capped.line(render(item));
    if (notes) capped.write(`\n${notes.after}\n`);
    return this.total;
  }
}

/** Ranks by a count, most first, then by the table's own order. */
export function mostFirst<T>(count: (item: T) => number): (a: Ranked<T>, b: Ranked<T>) => number {
  return (a, b) => count(b.item) - count(a.item) || a.index - b.index;
}

/** Ranks the rows that came last first (a table in time order: the most recent). */
export function lastFirst<T>(a: Ranked<T>, b: Ranked<T>): number {
  return b.index - a.index;
}

/**
 * Where every row of a capped table is: its CSV's name, or the query that lists them when the report set
 * has no CSVs (`--format` without csv).
 */
export function allRowsIn(
  ctx: Pick<ComplianceContext, "csvFiles">,
  csv: keyof NonNullable<ComplianceContext["csvFiles"]>,
  query: string,
): string {
  const name = ctx.csvFiles?.[csv];
  return name === undefined ? `${query} (this report set has no CSV)` : `\`${name}\``;
}
