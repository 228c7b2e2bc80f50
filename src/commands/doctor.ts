// `flagtrail doctor`: what a new set-up gets wrong, one line per check (ok, warn, fail). Exit 1 when any
// check fails, 0 otherwise (warnings included): it can gate a deployment.

import { z } from "zod";
import { type ConnectionFlags, type Env, resolveDbPath } from "../config.ts";
import {
  type Check,
  checkConfig,
  checkDisk,
  checkModes,
  checkNode,
  checkSigningKey,
  checkSinkSecrets,
  checkStore,
  projectFiles,
} from "../doctor/checks.ts";
import { probeKey } from "../doctor/keyProbe.ts";
import { FlagtrailError } from "../errors.ts";
import { configFileOf, type Project, parseConfigFile, readConfigText, resolveProjects } from "../projects.ts";
import { parseOptions, storeOptionsShape } from "./options.ts";

const doctorOptionsSchema = z.object({
  ...storeOptionsShape,
  baseUrl: z.string().optional(),
  apiKeyFile: z.string().min(1).optional(),
  apiKey: z.string().optional(),
  authHeader: z.string().optional(),
  config: z.string().min(1).optional(),
  json: z.boolean().default(false),
});

/**
 * The key lines: each project of a valid config, or the one connection of flags and environment. The
 * projects are resolved as sync resolves them (a config of controls alone leaves the flags' connection).
 */
async function keyChecks(flags: ConnectionFlags, configFile: string | undefined, env: Env): Promise<Check[]> {
  if (configFile !== undefined) {
    try {
      parseConfigFile(readConfigText(configFile), configFile);
    } catch {
      const detail = "not checked: the config is not valid (see config)";
      return [
        { name: "key", status: "warn", detail },
        { name: "clock", status: "warn", detail },
      ];
    }
  }
  let projects: Project[];
  try {
    projects = resolveProjects({ configFile }, flags, env);
  } catch (error) {
    return noKey("", error);
  }
  const lines: Check[] = [];
  for (const project of projects) {
    const label = configFile === undefined ? "" : ` (${project.name})`;
    try {
      lines.push(...(await probeKey({ ...project, apiKey: project.readApiKey() }, label)));
    } catch (error) {
      lines.push(...noKey(label, error));
    }
  }
  return lines;
}

/** No key to send: the key fails, and the clock, read from the answer's Date header, goes unchecked. */
function noKey(label: string, error: unknown): Check[] {
  return [
    { name: `key${label}`, status: "fail", detail: messageOf(error) },
    { name: `clock${label}`, status: "warn", detail: "not checked: no request was sent without a key" },
  ];
}

function messageOf(error: unknown): string {
  return error instanceof FlagtrailError ? error.message : String(error);
}

export async function runDoctor(raw: Record<string, unknown>, env: Env = process.env): Promise<Check[]> {
  const options = parseOptions(doctorOptionsSchema, raw);
  const db = resolveDbPath(options, env);
  const configFile = configFileOf(options.config, env);
  const keyFiles = [options.apiKeyFile, env.FLAGTRAIL_API_KEY_FILE].filter((f): f is string => !!f);
  const config = checkConfig(configFile);
  return [
    checkNode(),
    ...(await checkStore(db, undefined, env)),
    ...(await keyChecks(options, configFile, env)),
    checkDisk(db),
    checkModes(db, [...keyFiles, ...projectFiles(db, configFile)]),
    checkSigningKey(env),
    config,
    // A config that cannot be read or parsed is the config line's failure, said once there.
    config.status === "fail"
      ? { name: "sink secrets", status: "warn", detail: "not checked: the config is not valid (see config)" }
      : checkSinkSecrets(configFile, env),
  ];
}

export function formatChecks(checks: readonly Check[]): string {
  const width = Math.max(...checks.map((c) => c.name.length));
  return checks.map((c) => `${c.status.padEnd(4)}  ${c.name.padEnd(width)}  ${c.detail}\n`).join("");
}

export async function action(raw: Record<string, unknown>): Promise<void> {
  const checks = await runDoctor(raw);
  const json = raw.json === true;
  process.stdout.write(json ? `${JSON.stringify(checks, null, 2)}\n` : formatChecks(checks));
  const failed = checks.filter((c) => c.status === "fail");
  if (failed.length > 0) {
    throw new FlagtrailError(
      `${failed.length} check${failed.length === 1 ? "" : "s"} failed: ${failed.map((c) => c.name).join(", ")}.`,
    );
  }
}
