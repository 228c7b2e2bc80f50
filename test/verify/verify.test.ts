import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { IntegrityError } from "../../src/errors.ts";
import { manifestHmac } from "../../src/manifest/format.ts";
import { writeReports } from "../../src/report/writeReports.ts";
import { sqliteOf } from "../../src/store/connection.ts";
import type { Store } from "../../src/store/open.ts";
import { backfillRuleDiffs } from "../../src/store/ruleDiffs.ts";
import { verifyManifest } from "../../src/verify/manifest.ts";
import { verifyStore } from "../../src/verify/store.ts";
import { runCliInProcess } from "../helpers/inProcessCli.ts";
import { runCli } from "../helpers/runCli.ts";
import { storeRuleDiffs, writeChainHeadSignature } from "../helpers/storeFixtures.ts";
import { buildScenarioStore, GENERATED_AT, SCENARIO } from "../report/scenario.ts";

let store: Store | null = null;
afterEach(() => {
  store?.close();
  store = null;
});

function scenario(): Store {
  store = buildScenarioStore();
  return store;
}

async function expectBroken(s: Store, message: RegExp): Promise<void> {
  await expect(verifyStore(s)).rejects.toThrow(IntegrityError);
  await expect(verifyStore(s)).rejects.toThrow(message);
}

describe("verifyStore: the record chain", () => {
  it("accepts an intact chain and reports its head", async () => {
    const s = scenario();
    const head = sqliteOf(s).prepare("SELECT chain_hash FROM audit_logs WHERE seq = 16").pluck().get();
    expect(await verifyStore(s)).toMatchObject({
      records: 16,
      head: { seq: 16, chainHash: head },
      ruleDiffs: 0,
      staleRuleDiffs: 0,
      revisions: 1,
    });
    await backfillRuleDiffs(s);
    expect(await verifyStore(s)).toMatchObject({ records: 16, ruleDiffs: 2, revisions: 1 });
  });

  it("names the first row whose column was changed", async () => {
    const s = scenario();
    sqliteOf(s).prepare("UPDATE audit_logs SET server_day = '2000-01-01' WHERE seq = 9").run();
    sqliteOf(s).prepare("UPDATE audit_logs SET server_day = '2000-01-02' WHERE seq = 12").run();
    await expectBroken(s, /^broken chain at seq 9 \(id S000000000000000000009\): column server_day differs/);
  });

  it("has no copy of a raw field to change apart from the record: the columns are read from it", () => {
    const s = scenario();
    expect(() =>
      sqliteOf(s).prepare("UPDATE audit_logs SET updated_by = 'Someone Else' WHERE seq = 9").run(),
    ).toThrow(/cannot UPDATE generated column/);
  });

  it("catches a raw record edited in place", async () => {
    const s = scenario();
    sqliteOf(s)
      .prepare("UPDATE audit_logs SET raw_data = json_set(raw_data, '$.changeLog', ?) WHERE seq = 4")
      .run("Started experiment (after approval)");
    await expectBroken(s, /seq 4 \(id S000000000000000000004\): record_hash [0-9a-f]{12}… differs/);
  });

  it("catches a row whose raw and hashes were both rewritten: the next link breaks", async () => {
    const s = scenario();
    sqliteOf(s)
      .prepare("UPDATE audit_logs SET chain_hash_bytes = unhex(?) WHERE seq = 6")
      .run("f".repeat(64));
    await expectBroken(s, /seq 6 .*chain_hash ffffffffffff… differs from the link/);
  });

  it("catches a record moved in time: occurred_at and server_day are recomputed from the raw texts", async () => {
    const s = scenario();
    sqliteOf(s)
      .prepare(
        "UPDATE audit_logs SET occurred_at = occurred_at - 400 * 86400000, server_day = '2023-02-23' WHERE seq = 4",
      )
      .run();
    await expectBroken(s, /seq 4 \(id S000000000000000000004\): column occurred_at differs/);
    const t = buildScenarioStore();
    try {
      sqliteOf(t).prepare("UPDATE audit_logs SET server_day = '2024-03-30' WHERE seq = 4").run();
      await expectBroken(t, /seq 4 .*column server_day differs/);
    } finally {
      t.close();
    }
  });

  it("recomputes rule diffs: a rewritten summary or a deleted rule_changes row is caught", async () => {
    const s = scenario();
    await backfillRuleDiffs(s);
    sqliteOf(s)
      .prepare("UPDATE rule_diff_summaries SET summary = 'rules unchanged' WHERE audit_log_id = ?")
      .run("S000000000000000000005");
    await expectBroken(s, /derived data of seq 5 .*summary differs from the recomputed diff/);
    const changes = sqliteOf(s).prepare("SELECT changes FROM audit_logs WHERE seq = 5").pluck().get();
    storeRuleDiffs(s, "S000000000000000000005", changes);
    sqliteOf(s)
      .prepare(
        "DELETE FROM rule_changes WHERE id = (SELECT max(id) FROM rule_changes WHERE audit_log_id = ?)",
      )
      .run("S000000000000000000006");
    await expectBroken(s, /derived data of seq 6 .*rule_changes rows differ/);
    sqliteOf(s)
      .prepare("DELETE FROM rule_diff_summaries WHERE audit_log_id = ?")
      .run("S000000000000000000006");
    await expectBroken(s, /derived data of seq 6 .*summary is missing/);
    // A mark written by another diff version covers nothing: those diffs are recomputed, not missing.
    sqliteOf(s)
      .prepare(
        "UPDATE meta SET value = json_set(value, '$.diffVersion', -1) WHERE key = 'rule_diffs_backfilled'",
      )
      .run();
    await expect(verifyStore(s)).resolves.toMatchObject({ records: 16 });
  });

  it("re-hashes stored revisions", async () => {
    const s = scenario();
    sqliteOf(s)
      .prepare("UPDATE audit_log_revisions SET raw = replace(raw, 'edited later', 'edited again')")
      .run();
    await expectBroken(s, /revision \d+ of record S000000000000000000013: record_hash differs/);
  });

  it("catches a deleted record", async () => {
    const s = scenario();
    sqliteOf(s).prepare("DELETE FROM audit_logs WHERE seq = 3").run();
    await expectBroken(s, /seq 4 .*records 3\.\.3 are missing/);
  });

  it("catches records cut off the end when meta holds the head", async () => {
    const s = scenario();
    const head = sqliteOf(s)
      .prepare("SELECT chain_hash FROM audit_logs WHERE seq = 16")
      .pluck()
      .get() as string;
    const meta = sqliteOf(s).prepare("INSERT INTO meta (key, value) VALUES (?, ?)");
    meta.run("chain_head_seq", "16");
    meta.run("chain_head_hash", head);
    expect((await verifyStore(s)).records).toBe(16);
    sqliteOf(s).prepare("DELETE FROM audit_logs WHERE seq = 16").run();
    await expectBroken(s, /chain head recorded in meta \(seq 16/);
  });
});

async function report(key?: string) {
  const outDir = mkdtempSync(join(tmpdir(), "flagtrail-verify-"));
  const result = await writeReports({
    store: scenario(),
    ...SCENARIO,
    outDir,
    generatedAt: GENERATED_AT,
    ...(key ? { signingKey: key } : { signingKey: "" }),
  });
  return result;
}

describe("verifyManifest", () => {
  it("accepts the files as written and checks the signature with the key", async () => {
    const result = await report("k1");
    await expect(verifyManifest(result.manifestPath, "k1")).resolves.toMatchObject({
      files: 4,
      signatureChecked: true,
    });
    await expect(verifyManifest(result.manifestPath, undefined)).resolves.toMatchObject({
      signatureChecked: false,
    });
  });

  it("catches one changed byte in a report file", async () => {
    const result = await report("k1");
    const md = result.files.find((f) => f.name.endsWith(".md"))!.path;
    const bytes = readFileSync(md);
    bytes[100] = bytes[100]! ^ 1;
    writeFileSync(md, bytes);
    await expect(verifyManifest(result.manifestPath, "k1")).rejects.toThrow(
      /^compliance_2024-03-29_2024-04-01_Europe-Berlin\.md: SHA-256 [0-9a-f]{64} \(\d+ bytes\) differs/,
    );
  });

  it("catches a wrong key, an edited manifest and a removed signature", async () => {
    const result = await report("k1");
    await expect(verifyManifest(result.manifestPath, "k2")).rejects.toThrow(/signature does not match/);
    const manifest = JSON.parse(readFileSync(result.manifestPath, "utf8"));
    writeFileSync(
      result.manifestPath,
      JSON.stringify({ ...manifest, generatedAt: "2030-01-01T00:00:00.000Z" }),
    );
    await expect(verifyManifest(result.manifestPath, "k1")).rejects.toThrow(/signature does not match/);
    const { signature: _removed, ...unsigned } = manifest;
    writeFileSync(result.manifestPath, JSON.stringify(unsigned));
    await expect(verifyManifest(result.manifestPath, "k1")).rejects.toThrow(/not signed/);
  });

  it("does not sign without a key", async () => {
    const result = await report();
    expect(result.signed).toBe(false);
    expect(JSON.parse(readFileSync(result.manifestPath, "utf8")).signature).toBeUndefined();
  });
});

describe("flagtrail verify (CLI)", () => {
  it("prints OK, then exits 1 on a changed row and on a changed report byte", async () => {
    const dir = mkdtempSync(join(tmpdir(), "flagtrail-verify-cli-"));
    const dbPath = join(dir, "store.db");
    const file = buildScenarioStore(dbPath);
    const result = await writeReports({
      store: file,
      ...SCENARIO,
      outDir: join(dir, "reports"),
      signingKey: "secret",
    });
    // The writer signs the chain head when it runs with the key (src/store/digests.ts).
    writeChainHeadSignature(sqliteOf(file), "secret");
    file.close();
    const env = { FLAGTRAIL_SIGNING_KEY: "secret" };

    const ok = await runCli(["verify", "--db", dbPath, "--manifest", result.manifestPath], { env });
    expect(ok.stderr).toBe("");
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(
      /^OK: hash chain of 16 records intact .*4 report files match the manifest, signature valid\n$/,
    );

    appendFileSync(result.files[0]!.path, " ");
    // The first run spawned (end to end), these two in this process.
    const badFile = await runCliInProcess(["verify", "--db", dbPath, "--manifest", result.manifestPath], {
      env,
    });
    expect(badFile.code).toBe(1);
    expect(badFile.stderr).toMatch(
      /experiment-state-changes_2024-03-29_2024-04-01_Europe-Berlin\.csv: SHA-256/,
    );

    // Tamper the way an attacker would: straight through SQLite, not through flagtrail.
    const writable = new Database(dbPath);
    writable
      .prepare(
        "UPDATE audit_logs SET raw_data = json_set(raw_data, '$.changeLog', 'nothing to see') WHERE seq = 11",
      )
      .run();
    writable.close();
    const badRow = await runCliInProcess(["verify", "--db", dbPath]);
    expect(badRow.code).toBe(1);
    expect(badRow.stderr).toMatch(
      /Broken chain at seq 11 \(id S000000000000000000011\): record_hash [0-9a-f]{12}… differs/,
    );
  });

  it("a --manifest that cannot be read is bad input in one sentence, as any other file flagtrail reads", async () => {
    const dir = mkdtempSync(join(tmpdir(), "flagtrail-manifest-"));
    const missing = join(dir, "nope.json");
    const absent = await runCliInProcess(["verify", "--manifest", missing]);
    expect(absent.code).toBe(2);
    expect(absent.stderr).toBe(`flagtrail: Cannot read the manifest ${missing} (ENOENT).\n`);
    const directory = await runCliInProcess(["verify", "--manifest", dir]);
    expect(directory.code).toBe(2);
    expect(directory.stderr).toBe(`flagtrail: Cannot read the manifest ${dir} (EISDIR).\n`);
    // Another JSON file given by mistake (the demo's controls config beside the reports).
    const config = join(dir, "flagtrail-demo.config.json");
    writeFileSync(config, JSON.stringify({ controls: [] }));
    const notManifest = await runCliInProcess(["verify", "--manifest", config]);
    expect(notManifest.code).toBe(2);
    expect(notManifest.stderr).toBe(
      `flagtrail: ${config} is not a flagtrail report manifest (it has no "format": "flagtrail-report-manifest/…").\n`,
    );
    const newer = join(dir, "manifest_newer.json");
    writeFileSync(newer, JSON.stringify({ format: "flagtrail-report-manifest/9", files: "changed" }));
    const fromNewer = await runCliInProcess(["verify", "--manifest", newer]);
    expect(fromNewer.code).toBe(1);
    expect(fromNewer.stderr).toBe(
      `flagtrail: ${newer} is a manifest of format flagtrail-report-manifest/9, written by a newer flagtrail; upgrade flagtrail to check it.\n`,
    );
  });

  it("with --manifest, checks any store named (--db, --db-file, FLAGTRAIL_DB) and never prints its password", async () => {
    const dir = mkdtempSync(join(tmpdir(), "flagtrail-verify-named-"));
    const file = buildScenarioStore(join(dir, "store.db"));
    const { manifestPath } = await writeReports({ store: file, ...SCENARIO, outDir: join(dir, "reports") });
    file.close();
    const elsewhere = join(dir, "elsewhere");
    mkdirSync(elsewhere);
    // Nothing listens on port 1: the store cannot be checked, so the run must fail, masked.
    const url = "postgres://user:S3cretPw@127.0.0.1:1/x";
    const urlFile = join(dir, "db-url");
    writeFileSync(urlFile, `${url}\n`);
    const named = [
      { args: ["--db-file", urlFile], env: {} },
      { args: ["--db", url], env: {} },
      { args: [], env: { FLAGTRAIL_DB: url } },
    ];
    for (const { args, env } of named) {
      const run = await runCliInProcess(["verify", "--manifest", manifestPath, ...args], {
        env,
        cwd: elsewhere,
      });
      expect(run.stdout + run.stderr).not.toContain("S3cretPw");
      expect(run.stdout).toBe("");
      expect(run.stderr).toMatch(
        /^flagtrail: Cannot reach the PostgreSQL server of postgres:\/\/user:\*\*\*@127\.0\.0\.1:1\/x /,
      );
      expect(run.code).toBe(1);
    }
    const missingFile = join(dir, "missing.db");
    writeFileSync(urlFile, missingFile);
    const missing = await runCliInProcess(["verify", "--manifest", manifestPath, "--db-file", urlFile], {
      cwd: elsewhere,
    });
    expect(missing.stderr).toBe(
      `flagtrail: No flagtrail database at ${missingFile}. Run \`flagtrail sync\` first.\n`,
    );
    expect(missing.code).toBe(1);
    // No store named and none at ./flagtrail.db: the auditor's case, the files alone are checked.
    const filesOnly = await runCliInProcess(["verify", "--manifest", manifestPath], { cwd: elsewhere });
    expect(filesOnly.code).toBe(0);
    expect(filesOnly.stdout).toMatch(/; store not checked \(no database at \.\/flagtrail\.db\)\n$/);
  });
});

// A signed manifest whose `format` was edited is a manifest tampered with, not another JSON file given by
// mistake (exit 2) nor one from a newer flagtrail (upgrade): the key that signed it says so. Before, an
// attacker changing the files' hashes and the format to ".../9" got "upgrade flagtrail to check it", and
// one removing the format got "is not a flagtrail report manifest" (exit 2), the signature never checked.
describe("flagtrail verify --manifest: a signed manifest whose format was edited", () => {
  const env = { FLAGTRAIL_SIGNING_KEY: "k1" };

  async function edited(change: (manifest: Record<string, unknown>) => Record<string, unknown>) {
    const result = await report("k1");
    const manifest = JSON.parse(readFileSync(result.manifestPath, "utf8")) as Record<string, unknown>;
    writeFileSync(result.manifestPath, JSON.stringify(change(manifest)));
    return result.manifestPath;
  }

  it("to a newer-looking format, the files' hashes changed: the signature does not match (exit 1)", async () => {
    const path = await edited((m) => ({
      ...m,
      format: "flagtrail-report-manifest/9",
      files: (m.files as { sha256: string }[]).map((f) => ({ ...f, sha256: "0".repeat(64) })),
    }));
    const run = await runCliInProcess(["verify", "--manifest", path], { env });
    expect(run.stderr).toBe(
      "flagtrail: The manifest's HMAC-SHA256 signature does not match (wrong key, or the manifest was edited).\n",
    );
    expect(run.code).toBe(1);
  });

  it("removed: the signature does not match (exit 1); without the key, a malformed manifest (exit 1)", async () => {
    const path = await edited(({ format: _removed, ...rest }) => rest);
    const run = await runCliInProcess(["verify", "--manifest", path], { env });
    expect(run.stderr).toBe(
      "flagtrail: The manifest's HMAC-SHA256 signature does not match (wrong key, or the manifest was edited).\n",
    );
    expect(run.code).toBe(1);
    const unkeyed = await runCliInProcess(["verify", "--manifest", path], {
      env: { FLAGTRAIL_SIGNING_KEY: "" },
    });
    expect(unkeyed.stderr).toMatch(/^flagtrail: Manifest .* is malformed at format: /);
    expect(unkeyed.code).toBe(1);
  });

  it("an unsigned manifest without its format is still a manifest, malformed (exit 1)", async () => {
    const result = await report();
    const { format: _removed, ...rest } = JSON.parse(readFileSync(result.manifestPath, "utf8"));
    writeFileSync(result.manifestPath, JSON.stringify(rest));
    const run = await runCliInProcess(["verify", "--manifest", result.manifestPath]);
    expect(run.stderr).toMatch(/^flagtrail: Manifest .* is malformed at format: /);
    expect(run.code).toBe(1);
  });

  it("a manifest of a newer format signed with the key still says to upgrade", async () => {
    const result = await report("k1");
    const { signature: _old, ...body } = JSON.parse(readFileSync(result.manifestPath, "utf8"));
    const newer = { ...body, format: "flagtrail-report-manifest/9" };
    const signature = { algorithm: "HMAC-SHA256", value: manifestHmac(newer, "k1") };
    writeFileSync(result.manifestPath, JSON.stringify({ ...newer, signature }));
    const run = await runCliInProcess(["verify", "--manifest", result.manifestPath], { env });
    expect(run.stderr).toMatch(
      /is a manifest of format flagtrail-report-manifest\/9, written by a newer flagtrail/,
    );
    expect(run.code).toBe(1);
  });
});
