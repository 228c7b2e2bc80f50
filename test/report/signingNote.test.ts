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
      /^Note: the store's chain head is not signed .*signed by the next `flagtrail sync` with the key/,
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

  // A head signed with another key is refused by the sync the note used to send the user to
  // ("which signs it"): after a rotation the way out is the old key as FLAGTRAIL_SIGNING_KEY_PREVIOUS.
  it("names the previous key when the head is signed with another one", async () => {
    const { dir, dbPath, reportArgs } = scenarioOnDisk("flagtrail-signing-note-other-");
    const db = new Database(dbPath);
    expect(writeChainHeadSignature(db, "the-old-signing-key-0002")).toBe(true);
    db.close();
    const env = { FLAGTRAIL_SIGNING_KEY: KEY };
    const run = await runCliInProcess([...reportArgs, "--out", join(dir, "c")], { env });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/^Note: the store's chain head is not signed with FLAGTRAIL_SIGNING_KEY/);
    expect(run.stderr).toContain("give the old key as FLAGTRAIL_SIGNING_KEY_PREVIOUS");
    expect(run.stderr).not.toContain("which signs it");
    expect(run.stderr).not.toContain(KEY);
  });

  // A re-run without the key replaces the signed manifest (its files now match the new one): not silently.
  it("warns when a re-run without the key replaces a signed manifest, naming no key", async () => {
    const { dir, dbPath, reportArgs } = scenarioOnDisk("flagtrail-signing-replaced-");
    const db = new Database(dbPath);
    expect(writeChainHeadSignature(db, KEY)).toBe(true);
    db.close();
    const out = ["--out", join(dir, "d")];
    const signed = await runCliInProcess([...reportArgs, ...out], { env: { FLAGTRAIL_SIGNING_KEY: KEY } });
    expect(signed.code, signed.stderr).toBe(0);
    expect(signed.stdout).toMatch(/ {2}signed\n$/);
    const manifest = signed.stdout.trimEnd().split("\n").at(-1)!.split(/\s+/)[1]!;

    const unsigned = await runCliInProcess([...reportArgs, ...out]);
    expect(unsigned.code, unsigned.stderr).toBe(0);
    expect(unsigned.stdout).toMatch(/ {2}unsigned \(FLAGTRAIL_SIGNING_KEY not set\)\n$/);
    expect(unsigned.stderr).toBe(
      `Warning: the earlier manifest ${manifest} was signed; it is replaced by an unsigned one, as ` +
        "FLAGTRAIL_SIGNING_KEY is not set. Run the report again with the key to sign it.\n",
    );
    // Unsigned over unsigned, or signed again: nothing to warn about.
    const again = await runCliInProcess([...reportArgs, ...out]);
    expect(again.stderr).toBe("");
    const resigned = await runCliInProcess([...reportArgs, ...out], { env: { FLAGTRAIL_SIGNING_KEY: KEY } });
    expect(resigned.stderr).toBe("");
  });
});
