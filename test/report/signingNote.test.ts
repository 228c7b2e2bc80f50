// `report` with FLAGTRAIL_SIGNING_KEY on a store whose chain head is not signed with it (issue 26):
// the report succeeds, ends with the manifest's path, and says why `verify` with the key would fail
// and what signs the head; once the head is signed, the note is gone and `verify` passes.
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { runCliInProcess } from "../helpers/inProcessCli.ts";
import { runCli } from "../helpers/runCli.ts";
import { writeChainHeadSignature } from "../helpers/storeFixtures.ts";
import { scenarioOnDisk } from "./scenario.ts";

const KEY = "report-signing-key-0001";

describe("report and an unsigned chain head", () => {
  it("says what signs the head, and is silent once it is signed", async () => {
    const { dir, dbPath, reportArgs } = scenarioOnDisk("flagtrail-signing-note-");
    const env = { FLAGTRAIL_SIGNING_KEY: KEY };
    const first = await runCli([...reportArgs, "--out", join(dir, "a")], { env });
    expect(first.code, first.stderr).toBe(0);
    expect(first.stderr).toMatch(
      /^Note: the store's chain head is not signed .*run `flagtrail sync` with the key/,
    );
    expect(first.stderr).not.toContain(KEY);
    const last = first.stdout.trimEnd().split("\n").at(-1);
    expect(last).toMatch(/^Manifest: \S+manifest_2024-03-29_2024-04-01\.json {2}signed$/);

    const db = new Database(dbPath);
    expect(writeChainHeadSignature(db, KEY)).toBe(true);
    db.close();
    const second = await runCliInProcess([...reportArgs, "--out", join(dir, "b")], { env });
    expect(second.code, second.stderr).toBe(0);
    expect(second.stderr).toBe("");
    const manifest = (last ?? "").split(/\s+/)[1]!.replace("/a/", "/b/");
    const verify = await runCliInProcess(["verify", "--db", dbPath, "--manifest", manifest], { env });
    expect(verify.code, verify.stderr).toBe(0);
  });
});
