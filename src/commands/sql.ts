// `flagtrail sql "SELECT …"`: ad hoc queries on a read-only connection (see README "SQL cookbook").
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

export async function action(query: string, raw: Record<string, unknown>): Promise<void> {
  const options = parseOptions(sqlOptionsSchema, raw);
  const store = openStore(resolveDbPath(options), { readonly: true });
  try {
    await runSql(store, query, options.format, process.stdout, parseSqlParams(options.param));
  } finally {
    store.close();
  }
}
