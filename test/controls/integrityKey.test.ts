// The integrity control is `verify` as CI runs it: with FLAGTRAIL_SIGNING_KEY set, `check` checks the
// chain head's signature as `verify` does. Before, it ran verify without the key, so the newest records
// cut off the end (meta's head rewritten to match: a valid, shorter chain) failed `verify` and passed
// `check`. A store synced with the key on each engine; the truncation goes straight through the database,
// as an attacker's would.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningSimulator } from "../../src/simulator/index.ts";
import { runCliInProcess } from "../helpers/inProcessCli.ts";
import { daysAgo, simEnv, startTestSimulator } from "../helpers/simSync.ts";
import { ENGINES, type TestStore, testStore } from "./engines.ts";

const KEY = "integrity-control-key-0123456789";

/** The tables whose rows belong to a record (removed with it, as flagtrail would never have written them). */
const RECORD_TABLES = [
  "rule_changes",
  "rule_diff_summaries",
  "listed_days",
  "config_edit_links",
  "audit_log_revisions",
];

describe.each(ENGINES)("the integrity control with the signing key, on %s", (engine) => {
  let sim: RunningSimulator;
  let store: TestStore;
  let env: Record<string, string>;

  beforeAll(async () => {
    sim = await startTestSimulator({ records: 60, days: 6, timeZone: "UTC" });
    store = await testStore(engine);
    const config = store.config({ controls: [{ id: "int", kind: "integrity", severity: "medium" }] });
    env = simEnv(sim, store.db, { FLAGTRAIL_CONFIG: config });
    const sync = await runCliInProcess(["sync", "--since", daysAgo(7), "--quiet", "--no-entities"], {
      env: { ...env, FLAGTRAIL_SIGNING_KEY: KEY },
    });
    expect(sync.code, sync.stderr).toBe(0);
  });

  afterAll(async () => {
    await sim?.close();
  });

  const run = (args: string[], key: boolean) =>
    runCliInProcess(args, { env: key ? { ...env, FLAGTRAIL_SIGNING_KEY: KEY } : env });

  /** The newest `n` records removed with their rows, meta's head set to the record left last. */
  async function truncate(n: number): Promise<number> {
    const [head] = await store.query<{ seq: number }>("SELECT max(seq) AS seq FROM audit_logs");
    const keep = Number(head!.seq) - n;
    const cut = "SELECT id FROM audit_logs WHERE seq > ?";
    for (const table of RECORD_TABLES)
      await store.query(`DELETE FROM ${table} WHERE audit_log_id IN (${cut})`, [keep]);
    await store.query("DELETE FROM audit_logs WHERE seq > ?", [keep]);
    await store.query(
      "UPDATE meta SET value = (SELECT chain_hash FROM audit_logs WHERE seq = ?) WHERE key = 'chain_head_hash'",
      [keep],
    );
    await store.query("UPDATE meta SET value = ? WHERE key = 'chain_head_seq'", [String(keep)]);
    return keep;
  }

  it("finds the records cut off the end with the key, as verify does; without it, as before", async () => {
    const before = await run(["check", "--format", "json"], true);
    expect(before.stdout, before.stderr).toBe("[]\n");
    expect(before.code, before.stderr).toBe(0);

    const keep = await truncate(3);
    // Without the key the shorter chain is valid to verify and to the control: nothing to find.
    const unkeyed = await run(["verify"], false);
    expect(unkeyed.code, unkeyed.stderr).toBe(0);
    expect(unkeyed.stdout).toContain("chain head signature not checked");
    const plain = await run(["check", "--format", "json"], false);
    expect(plain.stdout).toBe("[]\n");
    expect(plain.code, plain.stderr).toBe(0);

    const verify = await run(["verify"], true);
    expect(verify.code).toBe(1);
    expect(verify.stderr).toMatch(
      new RegExp(`signature does not match the record it was made over \\(seq ${keep + 3}, no longer`),
    );

    const keyed = await run(["check", "--format", "json"], true);
    const findings = JSON.parse(keyed.stdout) as { id: string; severity: string; message: string }[];
    expect(findings.map((f) => [f.id, f.severity])).toEqual([["int:verify-head-signature", "medium"]]);
    expect(findings[0]!.message).toMatch(/^verify fails: the chain head's HMAC-SHA256 signature/);
    expect(keyed.code).toBe(1);
    expect(keyed.stderr).toMatch(/1 unwaived finding at or above low severity \(controls int\)/);
    // The key is in no output.
    for (const text of [keyed.stdout, keyed.stderr, verify.stderr]) expect(text).not.toContain(KEY);
    const stored = await store.query<{ message: string }>("SELECT message FROM control_findings");
    expect(stored.map((r) => r.message).join("\n")).not.toContain(KEY);

    // --fail-on above the control's severity: the finding is listed, the run passes.
    const high = await run(["check", "--format", "json", "--fail-on", "high"], true);
    expect(JSON.parse(high.stdout)).toHaveLength(1);
    expect(high.code, high.stderr).toBe(0);
  });
});
