// Several projects in one store, each in a namespace of its own with a single-project store's tables,
// chain, checkpoints and leases: on SQLite a file next to the store's, on PostgreSQL a schema next to its
// (public → public_eu). No query names the project (none reads another's rows; an id stays unique per
// project by its primary key); a store older than projects is `default`'s. The store's own namespace is
// the register: meta `project` names its project, a key each other one.
import { existsSync } from "node:fs";
import { basename, dirname, extname, join } from "node:path";
import { FlagtrailError } from "../errors.ts";
import { DEFAULT_PROJECT } from "../projects.ts";
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

/** The project the store's own namespace holds, if any yet. */
async function homeProjectOf(home: AnyStore): Promise<string | undefined> {
  const named = await readMetaValue(home, STORE_PROJECT_KEY);
  if (named !== undefined) return named;
  // Written before projects existed: its records are project default's.
  return (await newestRecordTimeTexts(home)) === undefined ? undefined : DEFAULT_PROJECT;
}

/** Projects kept in namespaces of their own, as registered in the store's namespace. */
async function registeredProjects(home: AnyStore): Promise<string[]> {
  const keys = await readMetaValuesWithPrefix(home, REGISTERED_PREFIX);
  return [...keys.keys()].map((key) => key.slice(REGISTERED_PREFIX.length)).sort();
}

/** `flagtrail.db` → `flagtrail.eu.db`: the file next to the store's that holds project `project`. */
export function projectFilePath(storePath: string, project: string): string {
  const ext = extname(storePath);
  return join(dirname(storePath), `${basename(storePath, ext)}.${project}${ext}`);
}

/**
 * Opens project `project`'s own namespace beside the store's (`home`, opened from `value`). A registered
 * project's must exist: made anew, its history would restart from a new genesis as if it never had one.
 */
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

/** Checks (and on a writable open, sets) which project a namespace holds. */
async function claim(store: AnyStore, project: string, readonly: boolean): Promise<void> {
  const held = await homeProjectOf(store);
  if (held !== undefined && held !== project) {
    throw new FlagtrailError(
      `${store.location} holds the audit history of project ${held}, not of project ${project}.`,
    );
  }
  if (held === undefined && !readonly) await writeMetaValue(store, STORE_PROJECT_KEY, project);
}

/**
 * Opens project `project`'s part of the store at `value`: the store's own namespace when it holds that
 * project (or nothing yet and the project is `default`), else the project's own namespace, which a
 * writable open creates, migrates and registers (read-only, a project never synced into it is an error).
 */
export async function openProjectStore(
  value: string,
  project: string,
  options: OpenOptions = {},
): Promise<AnyStore> {
  const [opened] = await openStoreProjects(value, { ...options, project });
  return opened!.store;
}

/** Project `project`'s part of the store whose own namespace `home` is open: `home` itself, or another. */
async function openIn(
  value: string,
  home: AnyStore,
  project: string,
  options: OpenOptions,
): Promise<AnyStore> {
  const readonly = options.readonly ?? false;
  const homeProject = await homeProjectOf(home);
  if (homeProject === project || (homeProject === undefined && project === DEFAULT_PROJECT)) {
    if (homeProject === undefined && !readonly) await writeMetaValue(home, STORE_PROJECT_KEY, project);
    return home;
  }
  const registered = await registeredProjects(home);
  if ((readonly || options.mustExist) && !registered.includes(project)) {
    const held = [...(homeProject ? [homeProject] : []), ...registered];
    throw new FlagtrailError(
      `${home.location} holds no project ${project}${held.length > 0 ? ` (it holds ${held.join(", ")})` : ""}.`,
    );
  }
  const own = await openOwnNamespace(value, home, project, {
    ...options,
    registered: registered.includes(project),
  });
  try {
    await claim(own, project, readonly);
    if (!readonly && !registered.includes(project)) {
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

/**
 * Opens every project of the store at `value` (or only `project`), read-only unless asked: a store that
 * holds no project yet is read as project `default`'s, empty. The store's own namespace is opened once.
 */
export async function openStoreProjects(
  value: string,
  options: OpenOptions & { project?: string | undefined } = {},
): Promise<ProjectStore[]> {
  const home = await openAnyStore(value, options);
  const opened: ProjectStore[] = [];
  try {
    const names = options.project !== undefined ? [options.project] : await projectsOf(home);
    for (const project of names.length > 0 ? names : [DEFAULT_PROJECT]) {
      opened.push({ project, store: await openIn(value, home, project, options) });
    }
  } catch (error) {
    await closeProjectStores(opened);
    if (!opened.some((p) => p.store === home)) await home.close();
    throw error;
  }
  if (!opened.some((p) => p.store === home)) await home.close();
  return opened;
}

export async function closeProjectStores(stores: readonly ProjectStore[]): Promise<void> {
  for (const { store } of stores) await store.close();
}
