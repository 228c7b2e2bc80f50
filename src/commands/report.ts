// `flagtrail report`: CSVs, compliance Markdown and a (signed) manifest for a period: of every project
// the store holds (one combined set of files), or of the one --project names.

import { z } from "zod";
import { resolveDbPath } from "../config.ts";
import { type Control, parseControlsConfig } from "../controls/config.ts";
import { FlagtrailError, ReportExistsError } from "../errors.ts";
import { configFileOf, projectNameSchema, readConfigText } from "../projects.ts";
import { REPORT_FORMATS } from "../report/formats.ts";
import { writeReports } from "../report/writeReports.ts";
import { signingKeyFromEnv } from "../signingKey.ts";
import { actionTypeListOption, checkActionTypes } from "./actionTypes.ts";
import { keepHeapSmall } from "./heap.ts";
import { PERIOD_FLAGS, parseOptions, storeOptionsShape, withFlagName } from "./options.ts";

const day = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, { message: "expected a calendar day YYYY-MM-DD" });

/**
 * `--format csv,md,html` of `report` and `daemon`: the files to write, comma-separated or repeated
 * (`--format csv --format md` is both, not the last one).
 */
export const reportFormatsOption = z
  .union([z.string(), z.array(z.string())])
  .default("csv,md")
  .transform((given) => [
    ...new Set(
      [given]
        .flat()
        .flatMap((text) => text.split(","))
        .map((f) => f.trim())
        .filter(Boolean),
    ),
  ])
  // zod's choice issue, worded by parseOptions as every choice is: expected csv, md or html, got "pdf".
  .pipe(z.array(z.enum(REPORT_FORMATS)).min(1));

const reportOptionsSchema = z.object({
  from: day,
  to: day,
  ...storeOptionsShape,
  project: projectNameSchema.optional(),
  out: z.string().min(1).default("reports"),
  format: reportFormatsOption,
  tz: z.string().min(1).default("UTC"),
  actionType: actionTypeListOption,
  allowUnknownActionTypes: z.boolean().default(false),
  bom: z.boolean().optional(),
  force: z.boolean().optional(),
  config: z.string().min(1).optional(),
});

/** The config file's controls (the report opens with them), or none without a file. */
function reportControls(configOption: string | undefined): Control[] {
  const file = configFileOf(configOption);
  return file === undefined ? [] : parseControlsConfig(readConfigText(file), file).controls;
}

export async function action(raw: Record<string, unknown>): Promise<void> {
  const options = parseOptions(reportOptionsSchema, raw);
  // A month's report allocates a batch of rows after another: at V8's defaults its heap grew ~17 MB more
  // for a month than for a week of the same 1M-record store (peak RSS 154 vs 129 MB); with this 145 vs 129.
  keepHeapSmall();
  checkActionTypes(options.actionType, options.allowUnknownActionTypes);
  const result = await writeReports({
    dbPath: resolveDbPath(options),
    project: options.project,
    from: options.from,
    to: options.to,
    timeZone: options.tz,
    outDir: options.out,
    formats: options.format,
    actionTypes: options.actionType,
    bom: options.bom,
    force: options.force,
    controls: reportControls(options.config),
    signingKey: signingKeyFromEnv(),
  }).catch((error: unknown) => {
    // The engine's message names no flag; here the user's way out is one.
    if (error instanceof ReportExistsError) {
      throw new FlagtrailError(
        `${error.path} already exists with different content (an earlier report of this period); ` +
          "move it away, or run again with --force to replace it (the manifest then records the replacement).",
        { cause: error },
      );
    }
    throw withFlagName(error, { ...PERIOD_FLAGS, "time zone": "--tz" });
  });
  if (result.notice) process.stdout.write(`${result.notice}\n`);
  for (const file of result.files) {
    // A CSV's rows are records; the Markdown's "rows" would be its record count, read as lines.
    const rows = file.name.endsWith(".csv") ? `  ${file.rows} rows` : "";
    process.stdout.write(`${file.path}${rows}  sha256 ${file.sha256}\n`);
  }
  // Last, so that the file an auditor passes to `verify --manifest` is the line a reader sees first.
  process.stdout.write(
    `Manifest: ${result.manifestPath}  ${result.signed ? "signed" : "unsigned (FLAGTRAIL_SIGNING_KEY not set)"}\n`,
  );
  if (result.replacedSignature) {
    // Written all the same (the files now match it, not the signed one); the loss is said, never the key.
    process.stderr.write(
      `Warning: the earlier manifest ${result.manifestPath} was signed; it is replaced by an unsigned one, as ` +
        "FLAGTRAIL_SIGNING_KEY is not set. Run the report again with the key to sign it.\n",
    );
  }
  if (result.unsignedHeads.length > 0) {
    const which = result.unsignedHeads.length > 1 ? ` (projects ${result.unsignedHeads.join(", ")})` : "";
    // Not signed with this key: never signed (a sync with the key signs it), or signed with another
    // one, which that sync refuses: a rotation, or records cut off the end. The two read alike here.
    process.stderr.write(
      `Note: the store's chain head is not signed with FLAGTRAIL_SIGNING_KEY${which}, so \`flagtrail verify\` ` +
        "with the key fails on the store until it is. A head never signed (last synced without the key) is " +
        "signed by the next `flagtrail sync` with the key; a head signed with another key makes that sync " +
        "refuse: after a key rotation give the old key as FLAGTRAIL_SIGNING_KEY_PREVIOUS, else records were " +
        "cut off the end (docs/operations.md, Backups).\n",
    );
  }
}
