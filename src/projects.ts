// Projects: the console API scopes keys, rate limits and audit logs to one project, and a company runs
// several. They are listed in a config file (flagtrail.config.json), or a single project named `default`
// comes from today's flags and environment variables. The file names where a key is (an environment
// variable or a file), never the key: a key written in it is refused, so it can sit in version control.
import { existsSync, readFileSync } from "node:fs";
import { z } from "zod";
import { authHeaderSchema, baseUrlSchema, DEFAULT_AUTH_HEADER, DEFAULT_BASE_URL } from "./api/connection.ts";
import { rateLimitsSchema, rateShareSchema } from "./api/rateBudget.ts";
import { type ConnectionFlags, type Env, resolveSyncConfig, warnIfKeyFileOpen } from "./config.ts";
import { FlagtrailError, UsageError } from "./errors.ts";

export const DEFAULT_PROJECT = "default";
const DEFAULT_CONFIG_FILE = "./flagtrail.config.json";

/** Stored in keys, lease names and report files: letters, digits, `-` and `_`, from a letter or digit. */
export const projectNameSchema = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$/, {
  message: "a project name is 1–63 letters, digits, '-' or '_', starting with a letter or digit",
});

const envName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, { message: "not an environment variable name" });

const CLEAR_KEY =
  "holds an API key in clear text; name the environment variable that holds it (apiKeyEnv) or a file (apiKeyFile)";

const projectEntrySchema = z
  .strictObject({
    apiKeyEnv: envName.optional(),
    apiKeyFile: z.string().min(1).optional(),
    baseUrl: baseUrlSchema.default(DEFAULT_BASE_URL),
    authHeader: authHeaderSchema.default(DEFAULT_AUTH_HEADER),
    rateLimits: rateLimitsSchema.optional(),
    /** This project's share of its rate limits (`--rate-share` wins). */
    rateShare: rateShareSchema.optional(),
    /** Entity requests per sync (`--entity-budget` wins). */
    entityBudget: z.number().int().min(0).optional(),
  })
  .refine((p) => (p.apiKeyEnv === undefined) !== (p.apiKeyFile === undefined), {
    message: "needs exactly one of apiKeyEnv and apiKeyFile",
  });

// Keys a person may reach for that would put the secret in the file: refused by name, not as "unknown".
const SECRET_FIELDS = ["apiKey", "key", "secret", "token", "api_key"] as const;

const configFileSchema = z.strictObject({
  projects: z
    .record(projectNameSchema, projectEntrySchema)
    .refine((p) => Object.keys(p).length > 0, { message: "lists no project" })
    // A project's history goes in a file (or schema) named after it: on a filesystem that ignores case
    // (macOS, Windows), `EU` and `eu` would share one.
    .refine((p) => new Set(Object.keys(p).map((name) => name.toLowerCase())).size === Object.keys(p).length, {
      message: "lists two project names that differ only in case",
    })
    .optional(),
  // Checked by src/controls/config.ts (with messages naming each control): here only their place.
  controls: z.array(z.unknown()).optional(),
  sinks: z.array(z.unknown()).optional(),
});

type ProjectEntry = z.infer<typeof projectEntrySchema>;

/** A project as the sync sees it: how to reach it. The key is read when the project runs. */
export interface Project {
  name: string;
  baseUrl: string;
  authHeader: string;
  rateLimits?: z.infer<typeof rateLimitsSchema> | undefined;
  rateShare?: number | undefined;
  entityBudget?: number | undefined;
  /** Reads the key (from the environment or a file); throws FlagtrailError naming where it looked. */
  readApiKey(): string;
}

function issuePath(path: readonly PropertyKey[]): string {
  return path.map(String).join(".");
}

/** One sentence for the first problem of a config file, naming the field (never its value). */
function describeIssue(file: string, issue: z.core.$ZodIssue): string {
  const at = issuePath(issue.path);
  if (issue.code === "unrecognized_keys") {
    const secret = issue.keys.find((k) => (SECRET_FIELDS as readonly string[]).includes(k));
    if (secret !== undefined) return `${file}: ${at ? `${at}.` : ""}${secret} ${CLEAR_KEY}.`;
    return `${file}: unknown key ${issue.keys.map((k) => (at ? `${at}.${k}` : k)).join(", ")}.`;
  }
  if (issue.code === "invalid_key") {
    // A record key (a project name) that fails its schema: say which name and why.
    const name = String(issue.path.at(-1));
    return `${file}: project name ${JSON.stringify(name)}: ${issue.issues[0]?.message ?? issue.message}.`;
  }
  return `${file}: ${at ? `${at}: ` : ""}${issue.message}.`;
}

/** A config file's JSON, checked as far as projects go; every problem is a UsageError naming the file. */
export function parseConfigFile(text: string, file: string): z.infer<typeof configFileSchema> {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new UsageError(`${file} is not valid JSON.`);
  }
  const parsed = configFileSchema.safeParse(json);
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    throw new UsageError(first ? describeIssue(file, first) : `${file} is not a flagtrail config.`);
  }
  return parsed.data;
}

/**
 * Parses a config file's text; every problem is a UsageError naming the file and the field. A file
 * without `projects` (only controls and sinks) leaves the single `default` project of flags and env.
 */
export function parseProjectsConfig(
  text: string,
  file: string,
  env: Env = process.env,
  flags: ConnectionFlags = {},
): Project[] {
  const { projects } = parseConfigFile(text, file);
  if (projects === undefined) return [defaultProject(flags, env)];
  return Object.entries(projects).map(([name, entry]) => projectOf(name, entry, env));
}

function projectOf(name: string, entry: ProjectEntry, env: Env): Project {
  return {
    name,
    baseUrl: entry.baseUrl,
    authHeader: entry.authHeader,
    rateLimits: entry.rateLimits,
    rateShare: entry.rateShare,
    entityBudget: entry.entityBudget,
    readApiKey: () => readProjectKey(name, entry, env),
  };
}

function readProjectKey(name: string, entry: ProjectEntry, env: Env): string {
  if (entry.apiKeyEnv !== undefined) {
    const key = env[entry.apiKeyEnv]?.trim();
    if (!key)
      throw new FlagtrailError(`Project ${name}: the environment variable ${entry.apiKeyEnv} is not set.`);
    return key;
  }
  const file = entry.apiKeyFile ?? "";
  warnIfKeyFileOpen(file);
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? "unreadable";
    throw new FlagtrailError(`Project ${name}: cannot read the API key file ${file} (${code}).`);
  }
  const key = text.trim();
  if (key === "") throw new FlagtrailError(`Project ${name}: the API key file ${file} is empty.`);
  return key;
}

/** The single project of today's flags and environment variables, named `default`. */
function defaultProject(flags: ConnectionFlags, env: Env = process.env): Project {
  const config = resolveSyncConfig(flags, env);
  return {
    name: DEFAULT_PROJECT,
    baseUrl: config.baseUrl,
    authHeader: config.authHeader,
    readApiKey: () => config.apiKey,
  };
}

/** The config file: given (--config / FLAGTRAIL_CONFIG), or ./flagtrail.config.json when it exists. */
export function configFileOf(given: string | undefined, env: Env = process.env): string | undefined {
  return given ?? env.FLAGTRAIL_CONFIG ?? (existsSync(DEFAULT_CONFIG_FILE) ? DEFAULT_CONFIG_FILE : undefined);
}

/** A config file's text; unreadable is a UsageError naming it. */
export function readConfigText(file: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? "unreadable";
    throw new UsageError(`Cannot read the config file ${file} (${code}).`);
  }
}

export interface ProjectSelection {
  /** The config file: given (--config / FLAGTRAIL_CONFIG), or ./flagtrail.config.json when it exists. */
  configFile?: string | undefined;
  /** Only this project (--project). */
  project?: string | undefined;
}

/**
 * The projects a command runs over: those of the config file (all, or the one selected), or the
 * `default` project of flags and environment when there is no config file.
 */
export function resolveProjects(
  selection: ProjectSelection,
  flags: ConnectionFlags,
  env: Env = process.env,
): Project[] {
  const file = configFileOf(selection.configFile, env);
  const projects =
    file === undefined
      ? [defaultProject(flags, env)]
      : parseProjectsConfig(readConfigText(file), file, env, flags);
  if (selection.project === undefined) return projects;
  const chosen = projects.filter((p) => p.name === selection.project);
  if (chosen.length === 0) {
    const known = projects.map((p) => p.name).join(", ");
    throw new UsageError(`No project named ${selection.project} (known: ${known}).`);
  }
  return chosen;
}
