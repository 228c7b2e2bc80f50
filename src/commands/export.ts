// `flagtrail export`: the store's audit records as NDJSON — OCSF events or the raw records — to a file
// or stdout, for a period or since a named cursor; or the control findings as OCSF Detection Findings
// (docs/export.md). Bad usage exits 2.
import { statSync } from "node:fs";
import { z } from "zod";
import { resolveDbPath } from "../config.ts";
import { sinkLabel, UsageError } from "../errors.ts";
import { EXPORT_FORMATS } from "../export/events.ts";
import { fileSink, isSpecialFile, type LineSink, streamSink } from "../export/output.ts";
import { type ExportResult, runExport } from "../export/run.ts";
import { projectNameSchema } from "../projects.ts";
import { closeProjectStores, openStoreProjects } from "../store/projectStores.ts";
import { givenPeriod } from "./check.ts";
import { namingFlags, parseOptions, storeOptionsShape } from "./options.ts";

const exportOptionsSchema = z.object({
  ...storeOptionsShape,
  project: projectNameSchema.optional(),
  out: z.string().min(1).optional(),
  format: z.enum(EXPORT_FORMATS).default("ocsf"),
  from: z.string().optional(),
  to: z.string().optional(),
  cursor: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, {
      message: "a cursor name is 1–64 letters, digits, '.', '-' or '_', starting with a letter or digit",
    })
    .optional(),
  findings: z.boolean().default(false),
  sink: z.string().min(1).optional(),
  config: z.string().optional(),
  batchSize: z.coerce.number().int().min(1).max(100_000).default(1000),
});
type ExportOptions = z.infer<typeof exportOptionsSchema>;

/** The combinations that make no sense, each refused in one sentence. */
function checkCombination(options: ExportOptions): void {
  if (options.sink !== undefined) {
    const other = (["out", "cursor", "from", "to", "findings"] as const).find(
      (k) => options[k] !== undefined && options[k] !== false,
    );
    if (other !== undefined)
      throw new UsageError(
        `--sink sends what that sink has not acknowledged yet, in its own format: it takes no --${other}.`,
      );
  }
  if (options.cursor !== undefined) {
    if (options.from !== undefined || options.to !== undefined) {
      throw new UsageError(
        "--cursor exports what that consumer has not had yet: it takes no --from or --to.",
      );
    }
    if (options.out === undefined) {
      throw new UsageError(
        "--cursor needs --out: the cursor moves only once a file holds the events on disk.",
      );
    }
    if (isSpecialFile(options.out)) {
      throw new UsageError(
        `--cursor needs --out to name a file, not a device or pipe (${options.out}): the cursor moves only once a file holds the events on disk.`,
      );
    }
    // The cursor has moved past the events of a file already there: replacing it loses those its shipper
    // has not read yet.
    if ((statSync(options.out, { throwIfNoEntry: false })?.size ?? 0) > 0) {
      throw new UsageError(
        `--cursor would replace ${options.out}, whose events its consumer may not have read yet: name a new file each run (docs/export.md), or remove it once shipped.`,
      );
    }
    if (options.findings) {
      throw new UsageError(
        "--findings exports the findings of a period (or all of them), not since a cursor.",
      );
    }
  }
  if (options.findings && options.format === "raw") {
    throw new UsageError("--findings writes OCSF Detection Findings: it takes no --format raw.");
  }
}

function summary(result: ExportResult, out: string, cursor: string | undefined): string {
  const projects = result.projects
    .map(
      (p) =>
        `project ${p.project}: ${p.events}${cursor === undefined ? "" : `, cursor ${cursor} at seq ${p.toSeq}`}`,
    )
    .join("; ");
  return `Wrote ${result.events} ${result.events === 1 ? "event" : "events"} to ${out} (${projects}).\n`;
}

/** `--sink NAME`: one delivery to that SIEM sink of the config (docs/sinks.md). */
async function sendToNamedSink(options: ExportOptions, name: string): Promise<void> {
  const { namedSink, sendToSink } = await import("../export/sinks/once.ts");
  const sink = namingFlags({ "config file": "--config" }, () => namedSink(options.config, name));
  const parts = await openStoreProjects(resolveDbPath(options), {
    project: options.project,
    readonly: false,
    mustExist: true,
  });
  try {
    const { summary, busy } = await sendToSink(parts, sink);
    process.stdout.write(summary);
    // Not a failure: the other run (the daemon, another cron job) is sending what this one would.
    if (busy.length > 0)
      process.stderr.write(
        `Note: ${sinkLabel(sink.name)} is being delivered by another run (project ${busy.join(", ")}); this run left it alone.\n`,
      );
  } finally {
    await closeProjectStores(parts);
  }
}

export async function action(raw: Record<string, unknown>): Promise<void> {
  const options = parseOptions(exportOptionsSchema, raw);
  checkCombination(options);
  const now = Date.now();
  if (options.sink !== undefined) return sendToNamedSink(options, options.sink);
  const period = givenPeriod(options.from, options.to, now);
  const parts = await openStoreProjects(resolveDbPath(options), {
    project: options.project,
    readonly: options.cursor === undefined,
    mustExist: true,
  });
  try {
    const sink: LineSink =
      options.out === undefined ? streamSink(process.stdout) : await fileSink(options.out);
    const result = await runExport(
      {
        parts,
        format: options.format,
        from: period?.start,
        to: period?.end,
        cursor: options.cursor,
        findings: options.findings,
        batchSize: options.batchSize,
        now,
      },
      sink,
    );
    if (options.out !== undefined) process.stdout.write(summary(result, options.out, options.cursor));
  } finally {
    await closeProjectStores(parts);
  }
}
