// `flagtrail sql "SELECT …"`: ad hoc queries on a read-only connection (see README "SQL cookbook"). On a
// store of several projects it runs in each project's part unless --project names one, and the rows
// come out as one result whose first column is the project.
import { z } from "zod";
import { resolveDbPath } from "../config.ts";
import { UsageError } from "../errors.ts";
import { parseSqlParams } from "../sql/params.ts";
import { runSql, runSqlInProjects } from "../sql/runSql.ts";
import { parseOptions } from "./options.ts";
import { readProjectOption, withReadProjects } from "./readProjects.ts";

const FORMATS = ["table", "csv", "json", "nl"] as const;

// --csv, --json, --nl, --table as sqlite-utils users type them; --format names the same four.
const sqlOptionsSchema = z
  .object({
    db: z.string().optional(),
    dbFile: z.string().min(1).optional(),
    format: z.enum(FORMATS, { message: "expected table, csv, json or nl" }).optional(),
    csv: z.boolean().default(false),
    json: z.boolean().default(false),
    nl: z.boolean().default(false),
    table: z.boolean().default(false),
    param: z.array(z.string()).default([]),
    ...readProjectOption,
  })
  .transform((o) => {
    const asked = new Set(FORMATS.filter((f) => o[f]));
    if (o.format) asked.add(o.format);
    if (asked.size > 1)
      throw new UsageError(
        `--format, --csv, --json, --nl and --table disagree: ${[...asked].join(" and ")}.`,
      );
    return { db: o.db, param: o.param, project: o.project, format: [...asked][0] ?? "table" };
  });

export async function action(query: string, raw: Record<string, unknown>): Promise<void> {
  const options = parseOptions(sqlOptionsSchema, raw);
  const params = parseSqlParams(options.param);
  await withReadProjects(resolveDbPath(options), options.project, async (projects) => {
    const [only] = projects;
    // One project read (--project, or a store holding one) prints exactly what it always printed.
    if (projects.length === 1 && only)
      await runSql(only.store, query, options.format, process.stdout, params);
    else await runSqlInProjects(projects, query, options.format, process.stdout, params);
  });
}
