// `flagtrail sql "SELECT …"`: ad hoc queries on a read-only connection (see README "SQL cookbook").

import type { Command } from "commander";
import { z } from "zod";
import { resolveDbPath } from "../config.ts";
import { parseSqlParams } from "../sql/params.ts";
import { runSql } from "../sql/runSql.ts";
import { openStore } from "../store/open.ts";
import { parseOptions } from "./options.ts";

const sqlOptionsSchema = z.object({
  db: z.string().optional(),
  format: z.enum(["table", "csv", "json"], { message: "expected table, csv or json" }).default("table"),
  param: z.array(z.string()).default([]),
});

function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

export function register(program: Command): void {
  program
    .command("sql")
    .description(
      "Run one read-only SQL query on the store (tables, views experiment_state_changes and config_edits, " +
        "FTS index audit_logs_fts). Writes are refused by SQLite (statement.readonly, then a read-only, query_only connection) without running; both they and bad SQL exit with 2.",
    )
    .argument("<query>", 'the SQL statement, e.g. "SELECT * FROM config_edits LIMIT 5"')
    .option("--db <path>", "SQLite database (env FLAGTRAIL_DB, default ./flagtrail.db)")
    .option("--format <format>", "table, csv or json", "table")
    .option(
      "--param <name=value>",
      "bind the named parameter @name (repeatable; an integer binds as a number, NULL as NULL, else text)",
      collect,
    )
    .action(async (query: string, raw: Record<string, unknown>) => {
      const options = parseOptions(sqlOptionsSchema, raw);
      const store = openStore(resolveDbPath(options), { readonly: true });
      try {
        await runSql(store, query, options.format, process.stdout, parseSqlParams(options.param));
      } finally {
        store.close();
      }
    });
}
