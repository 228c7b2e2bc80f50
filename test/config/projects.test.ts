import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { FlagtrailError, UsageError } from "../../src/errors.ts";
import { parseProjectsConfig, resolveProjects } from "../../src/projects.ts";

const FILE = "flagtrail.config.json";
const parse = (config: unknown, env: Record<string, string> = {}) =>
  parseProjectsConfig(JSON.stringify(config), FILE, env);
const failure = (config: unknown): Error => {
  try {
    parse(config);
  } catch (error) {
    return error as Error;
  }
  throw new Error("expected the config to be refused");
};

describe("the projects config file", () => {
  it("lists projects with their settings, defaults filled, keys read from the named variable or file", () => {
    const dir = mkdtempSync(join(tmpdir(), "flagtrail-projects-"));
    writeFileSync(join(dir, "key"), "file-key\n");
    const projects = parse(
      {
        projects: {
          "web-prod": { apiKeyEnv: "WEB_KEY", rateLimits: [{ limit: 50, windowMs: 10_000 }] },
          mobile_eu: { apiKeyFile: join(dir, "key"), baseUrl: "http://127.0.0.1:9/", authHeader: "X-Key" },
        },
      },
      { WEB_KEY: " env-key " },
    );
    expect(projects.map((p) => [p.name, p.baseUrl, p.authHeader, p.rateLimits])).toEqual([
      ["web-prod", "https://statsigapi.net", "STATSIG-API-KEY", [{ limit: 50, windowMs: 10_000 }]],
      ["mobile_eu", "http://127.0.0.1:9", "X-Key", undefined],
    ]);
    expect(projects.map((p) => p.readApiKey())).toEqual(["env-key", "file-key"]);
  });

  it("reads a project's rateShare and entityBudget, and refuses a share above 1 naming the field", () => {
    const [web] = parse({ projects: { web: { apiKeyEnv: "K", rateShare: 0.25, entityBudget: 20 } } });
    expect([web?.rateShare, web?.entityBudget]).toEqual([0.25, 20]);
    const error = failure({ projects: { web: { apiKeyEnv: "K", rateShare: 2 } } });
    expect(error).toBeInstanceOf(UsageError);
    expect(error.message).toBe(`${FILE}: projects.web.rateShare: must be at most 1.`);
    expect(failure({ projects: { web: { apiKeyEnv: "K", entityBudget: -1 } } }).message).toContain(
      "projects.web.entityBudget",
    );
  });

  it("refuses a key written in the file, naming the field and never echoing the key", () => {
    const error = failure({ projects: { web: { apiKey: "console-SECRET-123", apiKeyEnv: "K" } } });
    expect(error).toBeInstanceOf(UsageError);
    expect(error.message).toBe(
      `${FILE}: projects.web.apiKey holds an API key in clear text; name the environment variable that holds it (apiKeyEnv) or a file (apiKeyFile).`,
    );
    expect(error.message).not.toContain("SECRET");
  });

  it("names an unknown key, a bad name, a bad URL, a missing or doubled key source, an empty list", () => {
    expect(failure({ projects: { web: { apiKeyEnv: "K", region: "eu" } } }).message).toBe(
      `${FILE}: unknown key projects.web.region.`,
    );
    expect(failure({ projects: { web: { apiKeyEnv: "K" } }, db: "x" }).message).toBe(
      `${FILE}: unknown key db.`,
    );
    expect(failure({ projects: { "no spaces": { apiKeyEnv: "K" } } }).message).toBe(
      `${FILE}: project name "no spaces": a project name is 1–63 letters, digits, '-' or '_', starting with a letter or digit.`,
    );
    expect(failure({ projects: { web: { apiKeyEnv: "K", baseUrl: "ftp://x" } } }).message).toBe(
      `${FILE}: projects.web.baseUrl: the base URL must be an http:// or https:// address.`,
    );
    expect(failure({ projects: { web: {} } }).message).toBe(
      `${FILE}: projects.web: needs exactly one of apiKeyEnv and apiKeyFile.`,
    );
    expect(failure({ projects: { web: { apiKeyEnv: "K", apiKeyFile: "/k" } } }).message).toBe(
      `${FILE}: projects.web: needs exactly one of apiKeyEnv and apiKeyFile.`,
    );
    expect(failure({ projects: {} }).message).toBe(`${FILE}: projects: lists no project.`);
    const entry = { apiKeyEnv: "K" };
    expect(failure({ projects: { eu: entry, EU: entry } }).message).toBe(
      `${FILE}: projects: lists two project names that differ only in case.`,
    );
    expect(() => parseProjectsConfig("{", FILE)).toThrow(`${FILE} is not valid JSON.`);
  });

  it("fails only the project whose key is missing, when it runs, naming where it looked", () => {
    const [web, app] = parse({
      projects: { web: { apiKeyEnv: "WEB_KEY" }, app: { apiKeyFile: "/nonexistent/k" } },
    });
    expect(() => web?.readApiKey()).toThrow(
      new FlagtrailError("Project web: the environment variable WEB_KEY is not set."),
    );
    expect(() => app?.readApiKey()).toThrow(
      "Project app: cannot read the API key file /nonexistent/k (ENOENT).",
    );
  });
});

describe("choosing the projects a command runs over", () => {
  const env = { FLAGTRAIL_API_KEY: "k", FLAGTRAIL_BASE_URL: "http://127.0.0.1:1" };

  it("without a config file: one project named default, from the flags and environment", () => {
    const cwdless = { FLAGTRAIL_CONFIG: undefined };
    const [only, ...rest] = resolveProjects({}, {}, { ...env, ...cwdless });
    expect(rest).toEqual([]);
    expect([only?.name, only?.baseUrl, only?.readApiKey()]).toEqual(["default", "http://127.0.0.1:1", "k"]);
  });

  it("with one: all projects, or the one selected; an unknown selection lists the known ones", () => {
    const dir = mkdtempSync(join(tmpdir(), "flagtrail-projects-"));
    const file = join(dir, "c.json");
    writeFileSync(file, JSON.stringify({ projects: { a: { apiKeyEnv: "A" }, b: { apiKeyEnv: "B" } } }));
    expect(resolveProjects({ configFile: file }, {}, env).map((p) => p.name)).toEqual(["a", "b"]);
    expect(
      resolveProjects({ project: "b" }, {}, { ...env, FLAGTRAIL_CONFIG: file }).map((p) => p.name),
    ).toEqual(["b"]);
    expect(() => resolveProjects({ configFile: file, project: "c" }, {}, env)).toThrow(
      new UsageError("No project named c (known: a, b)."),
    );
    expect(() => resolveProjects({ configFile: join(dir, "missing.json") }, {}, env)).toThrow(
      `Cannot read the config file ${join(dir, "missing.json")} (ENOENT).`,
    );
  });
});
