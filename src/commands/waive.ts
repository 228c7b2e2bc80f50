// `flagtrail waive FINDING_ID --reason TEXT --by NAME [--expires YYYY-MM-DD]`: record who accepted a
// finding and why, as an appended, hash-chained row (src/controls/waivers.ts); `unwaive` appends the
// withdrawal. The finding must be one a check has kept.
import { z } from "zod";
import { resolveDbPath } from "../config.ts";
import { nextWaiverRow } from "../controls/waivers.ts";
import { UsageError } from "../errors.ts";
import { projectNameSchema } from "../projects.ts";
import { readFinding } from "../store/controls/findings.ts";
import { appendWaiver, readWaivers } from "../store/controls/waivers.ts";
import { closeProjectStores, openStoreProjects, type ProjectStore } from "../store/projectStores.ts";
import { parseOptions, storeOptionsShape } from "./options.ts";

const dayText = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/, { message: "expected a calendar day YYYY-MM-DD" })
  // zod runs this refinement even when the pattern failed: "tomorrow" must not reach toISOString().
  .refine(
    (d) => {
      const day = new Date(`${d}T00:00:00Z`);
      return !Number.isNaN(day.getTime()) && day.toISOString().slice(0, 10) === d;
    },
    { message: "not a calendar day" },
  );

const waiveOptionsSchema = z.object({
  ...storeOptionsShape,
  project: projectNameSchema.optional(),
  reason: z.string().trim().min(1, { message: "give a reason" }),
  by: z.string().trim().min(1, { message: "give a name" }),
  expires: dayText.optional(),
});

/** The one project whose store holds finding `id`; a UsageError when none or several do. */
async function projectOfFinding(parts: readonly ProjectStore[], id: string): Promise<ProjectStore> {
  const holding: ProjectStore[] = [];
  for (const part of parts) if (await readFinding(part.store, id)) holding.push(part);
  if (holding.length === 0)
    throw new UsageError(`No finding ${id} (run check first; ids are as it prints them).`);
  if (holding.length > 1) {
    throw new UsageError(
      `Finding ${id} is in several projects (${holding.map((p) => p.project).join(", ")}): pass --project.`,
    );
  }
  return holding[0]!;
}

export async function appendFor(
  raw: Record<string, unknown>,
  id: string,
  action: "waive" | "unwaive",
): Promise<string> {
  const options = parseOptions(waiveOptionsSchema, raw);
  const today = new Date().toISOString().slice(0, 10);
  if (options.expires !== undefined && options.expires < today)
    throw new UsageError(`--expires ${options.expires} is in the past.`);
  const parts = await openStoreProjects(resolveDbPath(options), {
    project: options.project,
    mustExist: true,
  });
  try {
    const part = await projectOfFinding(parts, id);
    if (action === "unwaive") {
      const latest = (await readWaivers(part.store)).filter((w) => w.finding_id === id).at(-1);
      if (latest?.action !== "waive") throw new UsageError(`Finding ${id} has no waiver to withdraw.`);
    }
    await appendWaiver(part.store, (previous) =>
      nextWaiverRow(previous, {
        finding_id: id,
        action,
        reason: options.reason,
        by_name: options.by,
        expires: action === "waive" ? (options.expires ?? null) : null,
        created_at: Date.now(),
      }),
    );
    return part.project;
  } finally {
    await closeProjectStores(parts);
  }
}

export async function action(id: string, raw: Record<string, unknown>): Promise<void> {
  const project = await appendFor(raw, id, "waive");
  const until = typeof raw.expires === "string" ? ` until ${raw.expires}` : "";
  process.stdout.write(`Waived ${id} (project ${project})${until}.\n`);
}
