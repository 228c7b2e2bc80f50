// Issue 26: `flagtrail doctor` checks a set-up line by line (ok / warn / fail) and exits 1 on any fail.
// Run as users run it: the real CLI against `flagtrail simulate` in a process of its own, over loopback;
// two of the doctor runs spawned (end to end), the others and the syncs that set stores up in this process.
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkStore } from "../../src/doctor/checks.ts";
import { type Store, sqliteOf } from "../../src/store/connection.ts";
import { openProjectStore } from "../../src/store/projectStores.ts";
import { runCliInProcess } from "../helpers/inProcessCli.ts";
import { CLI_PATH, cliEnv, runCli } from "../helpers/runCli.ts";
import { buildScenarioStore } from "../report/scenario.ts";

const SIM_KEY = "console-doctor-sim-key";
let sim: ChildProcess;
let simUrl: string;

beforeAll(async () => {
  sim = spawn(
    process.execPath,
    [CLI_PATH, "simulate", "--port", "0", "--records", "40", "--days", "10", "--api-key", SIM_KEY],
    { env: cliEnv(), stdio: ["ignore", "pipe", "pipe"] },
  );
  simUrl = await new Promise<string>((resolve, reject) => {
    let out = "";
    sim.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
      out += chunk;
      const url = /listening on (http:\/\/\S+)/.exec(out)?.[1];
      if (url) resolve(url);
    });
    sim.on("exit", (code) => reject(new Error(`simulate exited with ${code}`)));
  });
});

afterAll(() => {
  sim?.kill("SIGTERM");
});

/** The lines of doctor's output as { status, name } → detail. */
function lines(stdout: string): Map<string, { status: string; detail: string }> {
  const map = new Map<string, { status: string; detail: string }>();
  for (const line of stdout.trimEnd().split("\n")) {
    const m = /^(ok|warn|fail) +(.+?) {2,}(.*)$/.exec(line);
    if (!m) throw new Error(`not a doctor line: ${line}`);
    map.set(m[2] ?? "", { status: m[1] ?? "", detail: m[3] ?? "" });
  }
  return map;
}

function workDir(): string {
  return mkdtempSync(join(tmpdir(), "flagtrail-doctor-"));
}

describe("flagtrail doctor", () => {
  it("without a key: a fail line for the key, exit 1 with one sentence, no crash", async () => {
    const dir = workDir();
    const result = await runCli(["doctor"], { cwd: dir, env: { FLAGTRAIL_BASE_URL: simUrl } });
    expect(result.code).toBe(1);
    const checks = lines(result.stdout);
    expect(checks.get("key")).toEqual({
      status: "fail",
      detail: "No API key: set FLAGTRAIL_API_KEY or FLAGTRAIL_API_KEY_FILE, or pass --api-key-file.",
    });
    // The clock is read from the server's answer: said to be unchecked, not left out.
    expect(checks.get("clock")).toEqual({
      status: "warn",
      detail: "not checked: no request was sent without a key",
    });
    expect(checks.get("node")?.status).toBe("ok");
    expect(checks.get("store")?.status).toBe("warn");
    expect(checks.get("signing key")?.status).toBe("warn");
    expect(checks.get("config")?.status).toBe("ok");
    expect(result.stderr).toBe("flagtrail: 1 check failed: key.\n");
  });

  it("a synced store, a 0600 key file and a signing key: every check ok, exit 0", async () => {
    const dir = workDir();
    const keyFile = join(dir, "api-key");
    writeFileSync(keyFile, `${SIM_KEY}\n`, { mode: 0o600 });
    const env = {
      FLAGTRAIL_BASE_URL: simUrl,
      FLAGTRAIL_API_KEY_FILE: keyFile,
      FLAGTRAIL_DB: join(dir, "audit.db"),
      FLAGTRAIL_SIGNING_KEY: "doctor-signing-key",
      FLAGTRAIL_RATE_LIMITS: "100000/1000",
    };
    const sync = await runCliInProcess(["sync", "--quiet", "--no-entities"], { cwd: dir, env });
    expect(sync.code).toBe(0);
    const result = await runCli(["doctor"], { cwd: dir, env });
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    const checks = lines(result.stdout);
    expect([...checks.keys()]).toEqual([
      "node",
      "store",
      "migrations",
      "free pages",
      "chain head",
      "key",
      "clock",
      "disk",
      "file modes",
      "signing key",
      "config",
      "sink secrets",
    ]);
    for (const name of [
      "node",
      "store",
      "migrations",
      "free pages",
      "chain head",
      "key",
      "clock",
      "file modes",
      "signing key",
      "config",
    ])
      expect(checks.get(name)?.status, name).toBe("ok");
    expect(checks.get("key")?.detail).toBe(`accepted by ${simUrl} (HTTP 200)`);
    expect(result.stdout).not.toContain(SIM_KEY);
  });

  it("a rejected key fails without printing it; files readable by others are a warning", async () => {
    const dir = workDir();
    const db = join(dir, "audit.db");
    const env = { FLAGTRAIL_BASE_URL: simUrl, FLAGTRAIL_API_KEY: SIM_KEY, FLAGTRAIL_DB: db };
    expect((await runCliInProcess(["sync", "--quiet", "--no-entities"], { cwd: dir, env })).code).toBe(0);
    chmodSync(db, 0o644);
    const wrongKey = "console-not-the-right-key";
    const result = await runCliInProcess(["doctor", "--api-key", wrongKey], { cwd: dir, env });
    expect(result.code).toBe(1);
    const checks = lines(result.stdout);
    expect(checks.get("key")).toEqual({
      status: "fail",
      detail: `rejected by ${simUrl} (HTTP 401): not an active console key`,
    });
    expect(checks.get("file modes")?.status).toBe("warn");
    expect(checks.get("file modes")?.detail).toContain(`${db} (0644)`);
    expect(result.stdout + result.stderr).not.toContain(wrongKey);
  });

  it("a config of controls alone: --base-url is the URL probed, as sync reads it", async () => {
    const dir = workDir();
    const controls = [{ id: "c", kind: "completeness", severity: "high" }];
    writeFileSync(join(dir, "flagtrail.config.json"), JSON.stringify({ controls }));
    const env = { FLAGTRAIL_API_KEY: SIM_KEY, FLAGTRAIL_DB: join(dir, "audit.db") };
    const result = await runCliInProcess(["doctor", "--base-url", simUrl], { cwd: dir, env });
    const checks = lines(result.stdout);
    expect(checks.get("key (default)")).toEqual({ status: "ok", detail: `accepted by ${simUrl} (HTTP 200)` });
    expect(checks.get("config")).toEqual({
      status: "ok",
      detail: "./flagtrail.config.json: 1 project(s): default",
    });
  });

  it("a sink whose secret is not set is a warning naming the sink and the variable, never a value", async () => {
    const dir = workDir();
    const sinks = [
      { name: "hook", kind: "webhook", url: "https://example.com/h", secretEnv: "HOOK_SECRET" },
      { name: "chat", kind: "slack", urlEnv: "SLACK_URL" },
      { name: "pager", kind: "exec", command: "true" },
    ];
    writeFileSync(join(dir, "flagtrail.config.json"), JSON.stringify({ sinks }));
    const env = {
      FLAGTRAIL_API_KEY: SIM_KEY,
      FLAGTRAIL_DB: join(dir, "audit.db"),
      SLACK_URL: "https://hooks.example/s3cret",
    };
    const result = await runCliInProcess(["doctor", "--base-url", simUrl], { cwd: dir, env });
    expect(lines(result.stdout).get("sink secrets")).toEqual({
      status: "warn",
      detail: "not set or unreadable, so their alerts cannot be sent: hook (HOOK_SECRET)",
    });
    expect(result.stdout).not.toContain("s3cret");
    const set = await runCliInProcess(["doctor", "--base-url", simUrl], {
      cwd: dir,
      env: { ...env, HOOK_SECRET: "x" },
    });
    expect(lines(set.stdout).get("sink secrets")).toEqual({
      status: "ok",
      detail: "every secret of 3 sink(s) is set",
    });
  });

  it("an invalid projects config is a fail line naming the problem", async () => {
    const dir = workDir();
    writeFileSync(join(dir, "flagtrail.config.json"), JSON.stringify({ projects: { eu: { apiKey: "x" } } }));
    const result = await runCliInProcess(["doctor"], { cwd: dir, env: { FLAGTRAIL_BASE_URL: simUrl } });
    expect(result.code).toBe(1);
    const checks = lines(result.stdout);
    expect(checks.get("config")?.status).toBe("fail");
    expect(checks.get("config")?.detail).toContain("./flagtrail.config.json");
    expect(checks.get("key")?.status).toBe("warn");
    expect(checks.get("clock")).toEqual({
      status: "warn",
      detail: "not checked: the config is not valid (see config)",
    });
    // Said once, on the config line: the sink secrets are not checked, not failed with the same words.
    expect(checks.get("sink secrets")).toEqual({
      status: "warn",
      detail: "not checked: the config is not valid (see config)",
    });
    expect(result.stderr).toBe("flagtrail: 1 check failed: config.\n");
  });

  it("a --config that does not exist fails the config line alone, in its own words", async () => {
    const dir = workDir();
    const result = await runCliInProcess(["doctor", "--config", "nope.json"], {
      cwd: dir,
      env: { FLAGTRAIL_BASE_URL: simUrl },
    });
    expect(result.code).toBe(1);
    const checks = lines(result.stdout);
    expect(checks.get("config")).toEqual({ status: "fail", detail: "cannot read nope.json (ENOENT)" });
    expect(checks.get("sink secrets")).toEqual({
      status: "warn",
      detail: "not checked: the config is not valid (see config)",
    });
    expect(result.stderr).toBe("flagtrail: 1 check failed: config.\n");
  });
});

const MIB = 1024 ** 2;

/** Frees `freeMib` MiB of pages in a store's file by a dropped table, as a migration's table copy does. */
function freePages(store: Store, freeMib: number): void {
  const sqlite = sqliteOf(store);
  sqlite.exec("CREATE TABLE scratch (b BLOB)");
  const insert = sqlite.prepare("INSERT INTO scratch VALUES (zeroblob(?))");
  sqlite.transaction(() => {
    for (let i = 0; i < freeMib; i++) insert.run(MIB);
  })();
  sqlite.exec("DROP TABLE scratch");
}

/** A real store file whose pages hold `freeMib` MiB freed. */
function storeWithFreePages(dir: string, freeMib: number): string {
  const db = join(dir, "audit.db");
  const store = buildScenarioStore(db);
  freePages(store, freeMib);
  store.close();
  return db;
}

describe("flagtrail doctor: free pages of a SQLite store", () => {
  it("over 64 MiB and over a quarter of the file: a warning naming the bytes and VACUUM; after VACUUM, ok", async () => {
    const db = storeWithFreePages(workDir(), 70);
    const result = await runCli(["doctor", "--db", db], {
      env: { FLAGTRAIL_BASE_URL: simUrl, FLAGTRAIL_API_KEY: SIM_KEY },
    });
    const line = lines(result.stdout).get("free pages");
    expect(line?.status).toBe("warn");
    const sqlite = new Database(db, { readonly: true });
    const pageSize = sqlite.pragma("page_size", { simple: true }) as number;
    const free = (sqlite.pragma("freelist_count", { simple: true }) as number) * pageSize;
    const file = (sqlite.pragma("page_count", { simple: true }) as number) * pageSize;
    sqlite.close();
    expect(free).toBeGreaterThan(70 * MIB);
    const mib = (n: number) => `${(n / MIB).toFixed(1)} MiB`;
    expect(line?.detail).toBe(
      `${mib(free)} (${free} bytes, ${Math.round((free / file) * 100)} %) of the ${mib(file)} file are free pages; \`SQLITE_TMPDIR=${dirname(db)} sqlite3 ${db} VACUUM\` gives them back, run while nothing writes (no sync or daemon) with up to ${mib(2 * file)} free disk there (twice the file: the WAL, and its copy, which SQLite would otherwise make in the temporary directory, often a small /tmp)`,
    );
    // A warning, not a failure: the set-up works, it only holds space it could give back.
    expect(result.code).toBe(0);

    // The command as printed, pasted into a shell (where the sqlite3 shell is installed). SQLite's VACUUM
    // copies the database into a temporary file: under a small /tmp (a 1 MiB tmpfs as TMPDIR) a 26 MB
    // store's failed "database or disk is full" with 75 GB free beside it; SQLITE_TMPDIR keeps the copy there.
    const command = /`([^`]+ VACUUM)`/.exec(line?.detail ?? "")![1]!;
    const vacuum = spawnSync("sh", ["-c", command], { encoding: "utf8" });
    if (vacuum.status !== 127) expect([vacuum.status, vacuum.stderr]).toEqual([0, ""]);
    else new Database(db).exec("VACUUM").close();
    const after = await runCliInProcess(["doctor", "--db", db], {
      env: { FLAGTRAIL_BASE_URL: simUrl, FLAGTRAIL_API_KEY: SIM_KEY },
    });
    expect(lines(after.stdout).get("free pages")).toEqual({
      status: "ok",
      detail: expect.stringMatching(/^0\.0 MiB \(0 bytes, 0 %\) of the \d+\.\d MiB file are free pages$/),
    });
  });

  it("warns only when both the share and the bytes are over their limits", async () => {
    const db = storeWithFreePages(workDir(), 3);
    const status = async (share: number, bytes: number) =>
      (await checkStore(db, { share, bytes })).find((c) => c.name === "free pages")?.status;
    expect(await status(0.25, 1 * MIB)).toBe("warn");
    // The same store under the shipped limits: 3 MiB free is no news, however large its share.
    expect((await checkStore(db)).find((c) => c.name === "free pages")?.status).toBe("ok");
    expect(await status(0.25, 4 * MIB)).toBe("ok");
    expect(await status(0.99, 1 * MIB)).toBe("ok");
    // The command to paste names the file as one shell word, whatever its directory is called.
    const spaced = join(workDir(), "audit trail");
    mkdirSync(spaced);
    const quoted = storeWithFreePages(spaced, 3);
    const line = (await checkStore(quoted, { share: 0.25, bytes: 1 * MIB })).find(
      (c) => c.name === "free pages",
    );
    expect(line?.detail).toContain(`\`SQLITE_TMPDIR='${spaced}' sqlite3 '${quoted}' VACUUM\``);
  });

  it("a store of several projects: a line per project, each of its own file", async () => {
    const db = storeWithFreePages(workDir(), 0);
    const eu = (await openProjectStore(db, "eu")) as Store;
    freePages(eu, 3);
    eu.close();
    const checks = await checkStore(db, { share: 0.25, bytes: 1 * MIB });
    expect(checks.filter((c) => c.name.startsWith("free pages")).map((c) => [c.name, c.status])).toEqual([
      ["free pages (default)", "ok"],
      ["free pages (eu)", "warn"],
    ]);
    expect(checks.find((c) => c.name === "free pages (eu)")?.detail).toContain(
      `sqlite3 ${db.replace(/\.db$/, ".eu.db")} VACUUM\``,
    );
  });

  it("no store yet, an older store or a store that does not open: a line that says it was not checked", async () => {
    const dir = workDir();
    const older = storeWithFreePages(dir, 1);
    const sqlite = new Database(older);
    sqlite.exec(
      "DELETE FROM __drizzle_migrations WHERE created_at = (SELECT max(created_at) FROM __drizzle_migrations)",
    );
    sqlite.close();
    expect((await checkStore(older)).map((c) => [c.name, c.status, c.detail])).toEqual([
      ["store", "ok", `${older} opens`],
      [
        "migrations",
        "fail",
        `${older} was written by an older flagtrail; run \`flagtrail sync\` on it once to upgrade it.`,
      ],
      ["free pages", "warn", "not checked until the store is upgraded (see migrations)"],
      ["chain head", "warn", "not checked until the store is upgraded (see migrations)"],
    ]);
    const none = await checkStore(join(dir, "none.db"));
    expect(none.find((c) => c.name === "free pages")).toEqual({
      name: "free pages",
      status: "ok",
      detail: "no store to check",
    });
    const junk = join(dir, "junk.db");
    writeFileSync(junk, "not a database at all, but long enough to be read as one".repeat(100));
    expect((await checkStore(junk)).find((c) => c.name === "free pages")).toEqual({
      name: "free pages",
      status: "warn",
      detail: "not checked: the store did not open",
    });
  });
});
