// Issue 13: tampering verify did not catch — deleted quarantine rows, edited coverage, and records cut
// off the end together with a rewritten meta head. Tampering goes straight through SQLite, as an
// attacker's would, never through flagtrail.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { checkChainHeadSignature, signChainHead } from "../../src/digests.ts";
import { IntegrityError } from "../../src/errors.ts";
import { sqliteOf } from "../../src/store/connection.ts";
import {
  CHAIN_HEAD_SIGNATURE_KEY,
  COVERAGE_DIGEST_KEY,
  QUARANTINE_DIGEST_KEY,
  updateCoverageDigestIn,
  updateQuarantineDigestIn,
} from "../../src/store/digests.ts";
import { openStore, type Store } from "../../src/store/open.ts";
import { queriesOf } from "../../src/store/query.ts";
import { verifyStore } from "../../src/verify/store.ts";
import { runCliInProcess } from "../helpers/inProcessCli.ts";
import { runCli } from "../helpers/runCli.ts";
import { KEY, writeCoverageDays, writePage } from "./helpers.ts";

const open: Store[] = [];
afterEach(() => {
  for (const store of open.splice(0)) store.close();
});

/** A store as the sync leaves it: 3 pages of records with quarantined ones, 12 coverage days. */
async function synced(path = ":memory:"): Promise<Store> {
  const store = openStore(path);
  open.push(store);
  await writePage(store, 10, 2);
  await writePage(store, 10, 0);
  await writePage(store, 5, 3);
  await writeCoverageDays(store, 12);
  return store;
}

function run(store: Store, sql: string, ...params: unknown[]): void {
  sqliteOf(store)
    .prepare(sql)
    .run(...params);
}

async function expectBroken(store: Store, message: RegExp, key?: string): Promise<void> {
  const attempt = verifyStore(store, { signingKey: key });
  await expect(attempt).rejects.toThrow(IntegrityError);
  await expect(attempt).rejects.toThrow(message);
}

describe("quarantine and coverage digests", () => {
  it("match on a store as written, the writer's incremental digest equal to a full recount", async () => {
    const store = await synced();
    expect(await verifyStore(store, { signingKey: KEY })).toMatchObject({
      records: 25,
      quarantine: { rows: 5, digest: "matched" },
      coverage: { rows: 12, digest: "matched" },
      signature: "valid",
    });
    const meta = (key: string) =>
      sqliteOf(store).prepare("SELECT value FROM meta WHERE key = ?").pluck().get(key) as string;
    const incremental = meta(QUARANTINE_DIGEST_KEY);
    expect(JSON.parse(incremental)).toMatchObject({ rows: 5 });
    run(store, "DELETE FROM meta WHERE key = ?", QUARANTINE_DIGEST_KEY);
    await updateQuarantineDigestIn(await queriesOf(store));
    expect(meta(QUARANTINE_DIGEST_KEY)).toBe(incremental);
  });

  it("catch a deleted, an added and an edited quarantine row", async () => {
    const store = await synced();
    run(store, "DELETE FROM quarantine WHERE id = 2");
    await expectBroken(
      store,
      /quarantine table holds 4 rows, its digest in meta \(chain:quarantine\) covers 5/,
    );

    const other = await synced();
    run(other, "UPDATE quarantine SET issues = '[]' WHERE id = 4");
    await expectBroken(other, /quarantine table's rows differ from its digest in meta \(chain:quarantine\)/);

    const third = await synced();
    run(
      third,
      "INSERT INTO quarantine (raw, raw_hash, issues, received_at) SELECT raw, raw_hash || 'x', issues, 0 FROM quarantine WHERE id = 1",
    );
    await expectBroken(third, /quarantine row 6: raw_hash differs/);
  });

  it("catch an edited and a deleted coverage row", async () => {
    const store = await synced();
    run(store, "UPDATE coverage SET server_total = 4 WHERE day = '2024-03-05'");
    await expectBroken(store, /coverage table's rows differ from its digest in meta \(chain:coverage\)/);
    const other = await synced();
    run(other, "DELETE FROM coverage WHERE day = '2024-03-05'");
    await expectBroken(
      other,
      /coverage table holds 11 rows, its digest in meta \(chain:coverage\) covers 12/,
    );
    const third = await synced();
    run(third, "UPDATE meta SET value = 'nonsense' WHERE key = ?", COVERAGE_DIGEST_KEY);
    await expectBroken(third, /meta chain:coverage is not a coverage digest/);
  });

  it("are required once the store holds anything: a removed key is an error, not 'not covered'", async () => {
    const store = await synced();
    run(store, "DELETE FROM meta WHERE key IN (?, ?)", QUARANTINE_DIGEST_KEY, COVERAGE_DIGEST_KEY);
    run(store, "UPDATE coverage SET server_total = 4 WHERE day = '2024-03-05'");
    await expectBroken(store, /the digest in meta chain:quarantine and chain:coverage is missing/);
    // The next write creates them from the rows present (trust on first use).
    const q = await queriesOf(store);
    await updateCoverageDigestIn(q);
    await updateQuarantineDigestIn(q);
    expect((await verifyStore(store)).coverage).toEqual({ rows: 12, digest: "matched" });
  });
});

describe("the signed chain head", () => {
  it("signs seq and chain hash with the key, checked in constant time", () => {
    const head = { seq: 7, chainHash: "a".repeat(64) };
    const signature = signChainHead(head, KEY);
    expect(signature).toMatch(/^[0-9a-f]{64}$/);
    expect(checkChainHeadSignature(head, signature, KEY)).toBe(true);
    expect(checkChainHeadSignature(head, signature, "other key")).toBe(false);
    expect(checkChainHeadSignature({ ...head, seq: 6 }, signature, KEY)).toBe(false);
    expect(checkChainHeadSignature(head, "00", KEY)).toBe(false);
    // Hex decoding stops at the first character that is not hex: a text that only begins with it is not it.
    expect(checkChainHeadSignature(head, `${signature}zz`, KEY)).toBe(false);
  });

  it("is refused in meta with characters after it", async () => {
    const store = await synced();
    run(store, "UPDATE meta SET value = value || 'zz' WHERE key = ?", CHAIN_HEAD_SIGNATURE_KEY);
    await expectBroken(store, /chain head's HMAC-SHA256 signature does not match/, KEY);
  });

  it("catches records cut off the end with meta's head rewritten to match, which the unkeyed chain cannot", async () => {
    const store = await synced();
    // Cut the last page (seq 21..25) and make meta agree, as an attacker who knows the format would.
    run(store, "DELETE FROM audit_logs WHERE seq > 20");
    run(
      store,
      "UPDATE meta SET value = (SELECT chain_hash FROM audit_logs WHERE seq = 20) WHERE key = 'chain_head_hash'",
    );
    run(store, "UPDATE meta SET value = '20' WHERE key = 'chain_head_seq'");
    // Without the key the truncated store is a valid, shorter chain.
    expect(await verifyStore(store)).toMatchObject({ records: 20, signature: "not checked" });
    await expectBroken(
      store,
      /chain head's HMAC-SHA256 signature does not match the last record \(seq 20, /,
      KEY,
    );
    await expectBroken(await synced(), /signature does not match/, "a different key");
    // Removing the signature as well does not help.
    run(store, "DELETE FROM meta WHERE key = ?", CHAIN_HEAD_SIGNATURE_KEY);
    await expectBroken(store, /chain head is not signed .* but FLAGTRAIL_SIGNING_KEY is set/, KEY);
  });

  it("flagtrail verify (CLI) says what it matched, and exits 1 on a deleted quarantine row", async () => {
    const dbPath = join(mkdtempSync(join(tmpdir(), "flagtrail-verify-digests-")), "store.db");
    (await synced(dbPath)).close();
    open.pop();
    const env = { FLAGTRAIL_SIGNING_KEY: KEY };
    const ok = await runCli(["verify", "--db", dbPath], { env });
    expect(ok.stderr).toBe("");
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(
      /quarantine: 5 rows match their digest; coverage: 12 rows match their digest; chain head signature valid/,
    );
    const attacker = new Database(dbPath);
    attacker.prepare("DELETE FROM quarantine WHERE id = 5").run();
    attacker.close();
    const bad = await runCliInProcess(["verify", "--db", dbPath], { env }); // the first spawned
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/quarantine table holds 4 rows/);
  });
});
