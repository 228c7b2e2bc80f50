// `flagtrail sql "SELECT …"`: ad hoc queries on a read-only connection (see README "SQL cookbook").
import { z } from "zod";
import { resolveDbPath } from "../config.ts";
import { UsageError } from "../errors.ts";
import { parseSqlParams } from "../sql/params.ts";
import { runSql } from "../sql/runSql.ts";
import { openAnyStore } from "../store/openAny.ts";
import { parseOptions } from "./options.ts";

const FORMATS = ["table", "csv", "json", "nl"] as const;

// --csv, --json, --nl, --table as sqlite-utils users type them; --format names the same four.
const sqlOptionsSchema = z
  .object({
    db: z.string().optional(),
    format: z.enum(FORMATS, { message: "expected table, csv, json or nl" }).optional(),
    csv: z.boolean().default(false),
    json: z.boolean().default(false),
    nl: z.boolean().default(false),
    table: z.boolean().default(false),
    param: z.array(z.string()).default([]),
  })
  .transform((o) => {
    const asked = new Set(FORMATS.filter((f) => o[f]));
    if (o.format) asked.add(o.format);
    if (asked.size > 1)
      throw new UsageError(
        `--format, --csv, --json, --nl and --table disagree: ${[...asked].join(" and ")}.`,
      );
    return { db: o.db, param: o.param, format: [...asked][0] ?? "table" };
  });

export async function action(query: string, raw: Record<string, unknown>): Promise<void> {
  const options = parseOptions(sqlOptionsSchema, raw);
  const params = parseSqlParams(options.param);
  const store = await openAnyStore(resolveDbPath(options), { readonly: true });
  try {
    await runSql(store, query, options.format, process.stdout, params);
  } finally {
    await store.close();
  }
}
