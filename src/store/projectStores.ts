// Several projects in one store, each in a namespace of its own: a file or a schema beside the store's
// (docs/projects.md). The store's own namespace registers them: meta `project` names its project.
import { existsSync } from "node:fs";
import { FlagtrailError } from "../errors.ts";
import { DEFAULT_PROJECT } from "../projects.ts";
import { projectFilePath } from "../storeLocation.ts";
import {
  newestRecordTimeTexts,
  readMetaValue,
  readMetaValuesWithPrefix,
  writeMetaValue,
} from "./metaStore.ts";
import { type OpenOptions, openStore as openSqliteStore } from "./open.ts";
import { type AnyStore, openAnyStore, pgSide } from "./openAny.ts";
import { queriesOf, sql } from "./query.ts";

/** The meta key naming the project whose history a namespace holds. */
const STORE_PROJECT_KEY = "project";
/** In the store's own namespace: one key per project kept in a namespace of its own. */
const REGISTERED_PREFIX = "project:";

/** One project's part of a store, open. */
export interface ProjectStore {
  readonly project: string;
  readonly store: AnyStore;
}

async function homeProjectOf(home: AnyStore): Promise<string | undefined> {
  const named = await readMetaValue(home, STORE_PROJECT_KEY);
  if (named !== undefined) return named;
  // Written before projects existed: its records are project default's.
  return (await newestRecordTimeTexts(home)) === undefined ? undefined : DEFAULT_PROJECT;
}

async function registeredProjects(home: AnyStore): Promise<string[]> {
  const keys = await readMetaValuesWithPrefix(home, REGISTERED_PREFIX);
  return [...keys.keys()].map((key) => key.slice(REGISTERED_PREFIX.length)).sort();
}

/** Opens `project`'s own namespace beside `home`'s; a registered one must exist (docs/projects.md). */
async function openOwnNamespace(
  value: string,
  home: AnyStore,
  project: string,
  options: OpenOptions & { registered: boolean },
): Promise<AnyStore> {
  if (home.engine === "sqlite") {
    if (home.path === ":memory:") {
      throw new FlagtrailError(`An in-memory store holds one project; project ${project} needs a file.`);
    }
    const path = projectFilePath(home.path, project);
    if (options.registered && !existsSync(path)) throw missingNamespace(home, project, `file ${path}`);
    return openSqliteStore(path, { readonly: options.readonly });
  }
  const q = await queriesOf(home);
  const current = await q.get<{ name: string | null }>(sql`SELECT current_schema() AS name`);
  if (current?.name == null) throw new Error("the PostgreSQL session has no current schema");
  const schema = `${current.name}_${project}`;
  // PostgreSQL cuts longer names to 63 bytes, silently: two long project names would share a schema.
  if (Buffer.byteLength(schema) > 63) {
    throw new FlagtrailError(
      `Project ${project}'s schema name ${schema} is longer than PostgreSQL's 63 bytes.`,
    );
  }
  if (
    options.registered &&
    (await q.get(sql`SELECT 1 AS found FROM pg_namespace WHERE nspname = ${schema}`)) === undefined
  ) {
    throw missingNamespace(home, project, `schema ${schema}`);
  }
  return (await pgSide()).openPgStore(value, { readonly: options.readonly, schema });
}

/** A registered project whose file or schema is gone: said as such, not as an empty or foreign store. */
function missingNamespace(home: AnyStore, project: string, where: string): FlagtrailError {
  return new FlagtrailError(
    `Project ${project} is registered in ${home.location}, but its ${where} is missing (moved or deleted); ` +
      "restore it from the backup taken with the store.",
  );
}

/** Opens `project`'s part of the store at `value`; a writable open creates and registers a new one. */
export async function openProjectStore(value: string, project: string, options: OpenOptions = {}) {
  return (await openStoreProjects(value, { ...options, project }))[0]!.store;
}

/** Project `project`'s part of the store whose own namespace `home` is open: `home` itself, or another. */
async function openIn(value: string, home: AnyStore, project: string, options: OpenOptions) {
  const readonly = options.readonly ?? false;
  const homeProject = await homeProjectOf(home);
  if (homeProject === project || (homeProject === undefined && project === DEFAULT_PROJECT)) {
    if (homeProject === undefined && !readonly) await writeMetaValue(home, STORE_PROJECT_KEY, project);
    return home;
  }
  const registered = await registeredProjects(home);
  const known = registered.includes(project);
  if ((readonly || options.mustExist) && !known) {
    const held = [...(homeProject ? [homeProject] : []), ...registered];
    throw new FlagtrailError(
      `${home.location} holds no project ${project}${held.length > 0 ? ` (it holds ${held.join(", ")})` : ""}.`,
    );
  }
  const own = await openOwnNamespace(value, home, project, { ...options, registered: known });
  try {
    // Checks (and on a writable open, sets) which project the namespace holds.
    const held = await homeProjectOf(own);
    if (held !== undefined && held !== project) {
      throw new FlagtrailError(
        `${own.location} holds the audit history of project ${held}, not of project ${project}.`,
      );
    }
    if (held === undefined && !readonly) await writeMetaValue(own, STORE_PROJECT_KEY, project);
    if (!readonly && !known) {
      await writeMetaValue(home, `${REGISTERED_PREFIX}${project}`, own.location);
    }
  } catch (error) {
    await own.close();
    throw error;
  }
  return own;
}

/** The projects whose namespace `home` is or registers: its own project first, then the others by name. */
async function projectsOf(home: AnyStore): Promise<string[]> {
  const homeProject = await homeProjectOf(home);
  return [...(homeProject ? [homeProject] : []), ...(await registeredProjects(home))];
}

/** Opens every project of the store at `value` (or only `project`); a store with none is `default`'s. */
export async function openStoreProjects(
  value: string,
  // `home`: its own namespace, open already (doctor checks it first); handed over: closed or returned.
  options: OpenOptions & { project?: string | undefined; home?: AnyStore } = {},
): Promise<ProjectStore[]> {
  const home = options.home ?? (await openAnyStore(value, options));
  const opened: ProjectStore[] = [];
  try {
    const names = options.project !== undefined ? [options.project] : await projectsOf(home);
    for (const project of names.length > 0 ? names : [DEFAULT_PROJECT]) {
      opened.push({ project, store: await openIn(value, home, project, options) });
    }
  } catch (error) {
    await closeProjectStores(opened);
    throw error;
  } finally {
    if (!opened.some((p) => p.store === home)) await home.close();
  }
  return opened;
}

export async function closeProjectStores(stores: readonly ProjectStore[]): Promise<void> {
  for (const { store } of stores) await store.close();
}
