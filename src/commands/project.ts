// Which project a sync or daemon reaches, and how: the projects config (src/projects.ts) or today's
// flags and environment (the project `default`). A store holds one project's history for now: its
// first sync names the project in the store, and another project's sync is refused rather than mixed
// in (several projects in one store come with per-project tables).
import { type ClientTuning, type ConnectionFlags, resolveDbPath, type SyncConfig } from "../config.ts";
import { FlagtrailError, UsageError } from "../errors.ts";
import { DEFAULT_PROJECT, type ProjectSelection, resolveProjects } from "../projects.ts";
import { newestRecordTimeTexts, readMetaValue, type Store, writeMetaValue } from "../store/syncStore.ts";

/** The meta key naming the project whose history a store holds. */
export const STORE_PROJECT_KEY = "project";

export interface SyncTarget {
  project: string;
  config: SyncConfig;
  /** The client's tuning with the project's own rate limits, when the config gives them. */
  tuning: ClientTuning;
}

/** The one project this run syncs; several configured and none chosen is a usage error. */
export function resolveSyncTarget(
  flags: ConnectionFlags & { config?: string | undefined; project?: string | undefined },
  tuning: ClientTuning,
  env: Readonly<Record<string, string | undefined>> = process.env,
): SyncTarget {
  const selection: ProjectSelection = { configFile: flags.config, project: flags.project };
  const projects = resolveProjects(selection, flags, env);
  const [project, ...more] = projects;
  if (project === undefined) throw new UsageError("No project to sync.");
  if (more.length > 0) {
    throw new UsageError(
      `The config lists ${projects.length} projects (${projects.map((p) => p.name).join(", ")}); a store holds one project for now: pass --project NAME, with a --db for each.`,
    );
  }
  const config: SyncConfig = {
    baseUrl: project.baseUrl,
    authHeader: project.authHeader,
    apiKey: project.readApiKey(),
    dbPath: resolveDbPath(flags, env),
  };
  return {
    project: project.name,
    config,
    tuning: project.rateLimits ? { ...tuning, rateLimits: project.rateLimits } : tuning,
  };
}

/**
 * Names `project` in the store on its first sync, and refuses another project's history. A store written
 * before projects existed holds the project `default` if it holds any record.
 */
export async function claimStoreProject(store: Store, project: string): Promise<void> {
  const named = await readMetaValue(store, STORE_PROJECT_KEY);
  const held = named ?? ((await newestRecordTimeTexts(store)) === undefined ? undefined : DEFAULT_PROJECT);
  if (held !== undefined && held !== project) {
    throw new FlagtrailError(
      `${store.location} holds the audit history of project ${held}; project ${project} needs a store of its own (one store holds one project for now).`,
    );
  }
  if (named === undefined) await writeMetaValue(store, STORE_PROJECT_KEY, project);
}
