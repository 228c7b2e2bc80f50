// `flagtrail sql "SELECT …"`: ad hoc queries on a read-only connection (see README "SQL cookbook"). On a
// store of several projects it runs in each project's part unless --project names one, and the rows
// come out as one result whose first column is the project.
import { z } from "zod";
import { resolveDbPath } from "../config.ts";
import { UsageError } from "../errors.ts";
import { parseSqlParams } from "../sql/params.ts";
import { DEFAULT_TIMEOUT_SECONDS, runSql, runSqlInProjects } from "../sql/runSql.ts";
import { namingFlags, parseOptions, storeOptionsShape } from "./options.ts";
import { readProjectOption, withReadProjects } from "./readProjects.ts";

const FORMATS = ["table", "csv", "json", "nl"] as const;

/** Seconds a query may work; a day at most (timers and statement_timeout hold far more). */
const timeoutText = z
  .string()
  .regex(/^\d+(\.\d+)?$/, { message: "expected a number of seconds" })
  .transform(Number)
  .refine((n) => n > 0 && n <= 86_400, { message: "expected more than 0 and at most 86400 seconds" });

// --csv, --json, --nl, --table as sqlite-utils users type them; --format names the same four.
const sqlOptionsSchema = z
  .object({
    ...storeOptionsShape,
    format: z.enum(FORMATS).optional(),
    csv: z.boolean().default(false),
    json: z.boolean().default(false),
    nl: z.boolean().default(false),
    table: z.boolean().default(false),
    param: z.array(z.string()).default([]),
    timeout: timeoutText.optional(),
    ...readProjectOption,
  })
  .transform((o) => {
    const asked = new Set(FORMATS.filter((f) => o[f]));
    if (o.format) asked.add(o.format);
    if (asked.size > 1)
      throw new UsageError(
        `--format, --csv, --json, --nl and --table disagree: ${[...asked].join(" and ")}.`,
      );
    const timeoutMs = (o.timeout ?? DEFAULT_TIMEOUT_SECONDS) * 1000;
    return {
      db: o.db,
      dbFile: o.dbFile,
      param: o.param,
      project: o.project,
      format: [...asked][0] ?? "table",
      timeoutMs,
    };
  });

export async function action(query: string, raw: Record<string, unknown>): Promise<void> {
  const options = parseOptions(sqlOptionsSchema, raw);
  const params = namingFlags({ "query parameter": "--param" }, () => parseSqlParams(options.param));
  await withReadProjects(resolveDbPath(options), options.project, async (projects) => {
    const [only] = projects;
    // One project read (--project, or a store holding one) prints exactly what it always printed.
    const { format, timeoutMs } = options;
    if (projects.length === 1 && only)
      await runSql(only.store, query, format, process.stdout, params, timeoutMs);
    else await runSqlInProjects(projects, query, format, process.stdout, params, timeoutMs);
  });
}
