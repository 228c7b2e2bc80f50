// Which projects a sync or daemon reaches, and how: the projects config (src/projects.ts) or today's
// flags and environment (the project `default`); and running one piece of work per project, several at
// once, so that one project failing (its key refused, its server down) leaves the others' work done.
import { DEFAULT_RATE_LIMITS, sharedLimits } from "../api/rateBudget.ts";
import type { ClientTuning, ConnectionFlags } from "../config.ts";
import { AbortedError, FlagtrailError } from "../errors.ts";
import { type Project, type ProjectSelection, resolveProjects } from "../projects.ts";
import { SYNC_DEFAULTS } from "../sync/defaults.ts";

export interface SyncTarget {
  project: Project;
  /**
   * The client's tuning: the project's own rate limits when the config gives them, scaled to the rate
   * share (the flag's, else the project's, else the default).
   */
  tuning: ClientTuning;
  /** Entity requests per sync: the flag's, else the project's; undefined leaves the engine's default. */
  entityBudget: number | undefined;
}

/** Every project this run syncs: those the config lists, or the one `--project` names. */
export function resolveSyncTargets(
  flags: ConnectionFlags & {
    config?: string | undefined;
    project?: string | undefined;
    rateShare?: number | undefined;
    entityBudget?: number | undefined;
  },
  tuning: ClientTuning,
  env: Readonly<Record<string, string | undefined>> = process.env,
): SyncTarget[] {
  const selection: ProjectSelection = { configFile: flags.config, project: flags.project };
  return resolveProjects(selection, flags, env).map((project) => {
    const limits = project.rateLimits ?? tuning.rateLimits ?? DEFAULT_RATE_LIMITS;
    const share = flags.rateShare ?? project.rateShare ?? SYNC_DEFAULTS.rateShare;
    return {
      project,
      tuning: { ...tuning, rateLimits: sharedLimits(limits, share) },
      entityBudget: flags.entityBudget ?? project.entityBudget,
    };
  });
}

export type ProjectOutcome<T> =
  | { project: string; ok: true; value: T }
  | { project: string; ok: false; error: unknown };

/**
 * Runs `work` for each project, at most `slots` at a time, and never lets one project's failure stop
 * another's: every outcome comes back, in the projects' order.
 */
export async function forEachProject<T>(
  projects: readonly string[],
  slots: number,
  work: (project: string) => Promise<T>,
): Promise<ProjectOutcome<T>[]> {
  const outcomes: ProjectOutcome<T>[] = new Array(projects.length);
  let next = 0;
  const lane = async () => {
    while (next < projects.length) {
      const index = next++;
      const project = projects[index] as string;
      try {
        outcomes[index] = { project, ok: true, value: await work(project) };
      } catch (error) {
        outcomes[index] = { project, ok: false, error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(slots, projects.length)) }, lane));
  return outcomes;
}

/**
 * A failure's one sentence, as the CLI prints it; beside the project's name, without the "Project NAME: "
 * a project's own errors start with (for `--project NAME` alone), which read "eu (Project eu: …)".
 */
export function describeFailure(error: unknown, project?: string): string {
  const message = error instanceof Error ? error.message : String(error);
  const own = `Project ${project}: `;
  return project !== undefined && message.startsWith(own) ? message.slice(own.length) : message;
}

/**
 * Throws for the failed projects, if any: a single project's own error as it is (its exit code and
 * sentence unchanged), several as one error naming each failed project and why.
 */
export function throwIfFailed(outcomes: readonly ProjectOutcome<unknown>[]): void {
  const failed = outcomes.filter((o): o is Extract<ProjectOutcome<unknown>, { ok: false }> => !o.ok);
  const [first] = failed;
  if (first === undefined) return;
  if (outcomes.length === 1) throw first.error;
  const reasons = failed.map(
    (o) => `${o.project} (${describeFailure(o.error, o.project).replace(/\.$/, "")})`,
  );
  const sentence = `${failed.length} of ${outcomes.length} projects failed: ${reasons.join("; ")}.`;
  if (failed.every((o) => o.error instanceof AbortedError)) throw new AbortedError(sentence);
  throw new FlagtrailError(sentence);
}
