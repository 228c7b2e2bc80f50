// What the compliance Markdown's sections share: the buffered file writer, the context they read
// from, and the helpers that run a section's query and print it after the section.
import { closeSync, openSync, writeSync } from "node:fs";
import type Database from "better-sqlite3";
import type { Period } from "../period.ts";
import { paramsFor, QUERIES, type QueryName } from "../queries.ts";
import type { ServerDays } from "../serverDays.ts";
import { formatSqlParams } from "../sqlParams.ts";

/** Appends text to a file through a 64 KiB buffer: bounded memory, few system calls. */
export class TextFile {
  private readonly fd: number;
  private chunks: string[] = [];
  private size = 0;

  constructor(path: string) {
    this.fd = openSync(path, "w", 0o600);
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

  close(): void {
    this.flush();
    closeSync(this.fd);
  }
}

export interface ComplianceContext {
  sqlite: Database.Database;
  period: Period;
  /** The server days the period overlaps (coverage is per server day); null without dated records. */
  serverDays: ServerDays | null;
  actionTypes: readonly string[] | null;
  params: Record<string, unknown>;
  formatTime: (epochMs: number) => string;
  generatedAt: string;
  version: string;
}

export function run<Row>(ctx: ComplianceContext, name: QueryName): Row[] {
  const sql = QUERIES[name];
  return ctx.sqlite.prepare(sql).all(paramsFor(sql, ctx.params)) as Row[];
}

export function iterate<Row>(ctx: ComplianceContext, name: QueryName): IterableIterator<Row> {
  const sql = QUERIES[name];
  return ctx.sqlite.prepare(sql).iterate(paramsFor(sql, ctx.params)) as IterableIterator<Row>;
}

/** The queries behind a section, each with its parameters in the form `flagtrail sql --param` takes. */
export function querySection(out: TextFile, ctx: ComplianceContext, ...names: QueryName[]): void {
  out.line();
  out.line(`<details><summary>Query</summary>`);
  for (const name of names) {
    const sql = QUERIES[name];
    out.line();
    out.line("```sql");
    out.line(sql);
    out.line("```");
    const params = paramsFor(sql, ctx.params);
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
