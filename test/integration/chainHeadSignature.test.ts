// The chain head's signature as doctor and status show it (trial findings): doctor said all ok on a store
// the next sync would refuse (the head signed with another key than FLAGTRAIL_SIGNING_KEY) and did not warn
// of FLAGTRAIL_SIGNING_KEY_PREVIOUS left set after the rotation; status did not say whether the head is
// signed. Real CLI against the simulator, on SQLite and PostgreSQL; no key is ever printed.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningSimulator } from "../../src/simulator/index.ts";
import { runCliInProcess } from "../helpers/inProcessCli.ts";
import { daysAgo, simEnv, startTestSimulator, tempDbPath } from "../helpers/simSync.ts";
import { freshDatabase } from "../pg/cluster.ts";

const KEY = "head-signature-key-one";
const OTHER = "head-signature-key-two";
let sim: RunningSimulator;

beforeAll(async () => {
  sim = await startTestSimulator({ records: 80, days: 6, timeZone: "UTC" });
});
afterAll(async () => {
  await sim?.close();
});

const run = (db: string, args: string[], keys: Record<string, string> = {}) =>
  runCliInProcess(args, { env: simEnv(sim, db, keys) });

/** doctor's line `name` as { status, detail }. */
function doctorLine(stdout: string, name: string) {
  const line = stdout.split("\n").find((l) => new RegExp(`^\\w+ +${name} {2,}`).test(l)) ?? "";
  const m = /^(\w+) +.+? {2,}(.*)$/.exec(line);
  return { status: m?.[1], detail: m?.[2] };
}

describe.each(["sqlite", "pg"] as const)("the chain head's signature, %s", (engine) => {
  it("status shows it; doctor forecasts the next sync's verdict and warns of a previous key left set", async () => {
    const db = engine === "pg" ? await freshDatabase("headsig") : tempDbPath("flagtrail-headsig-");
    const unsigned = await run(db, ["sync", "--since", daysAgo(7), "--quiet", "--no-entities"]);
    expect(unsigned.code, unsigned.stderr).toBe(0);
    const before = await run(db, ["status"]);
    expect(before.stdout).toMatch(
      /^Chain head signature: none \(a sync with FLAGTRAIL_SIGNING_KEY signs the head\)$/m,
    );

    sim.control.insertAtHead(2);
    const signed = await run(db, ["sync", "--quiet", "--no-entities"], { FLAGTRAIL_SIGNING_KEY: KEY });
    expect(signed.code, signed.stderr).toBe(0);
    const json = JSON.parse((await run(db, ["status", "--json"])).stdout);
    const seq = json.chainHead.seq as number;
    expect(json.chainHead).toMatchObject({ signed: true, signedSeq: seq });
    expect((await run(db, ["status"])).stdout).toMatch(
      new RegExp(
        `^Chain head signature: signed up to seq ${seq} \\(flagtrail verify with the key checks it\\)$`,
        "m",
      ),
    );

    const ok = await run(db, ["doctor"], { FLAGTRAIL_SIGNING_KEY: KEY });
    expect(doctorLine(ok.stdout, "chain head")).toEqual({
      status: "ok",
      detail: `signed up to seq ${seq} with FLAGTRAIL_SIGNING_KEY`,
    });
    const left = await run(db, ["doctor"], {
      FLAGTRAIL_SIGNING_KEY: KEY,
      FLAGTRAIL_SIGNING_KEY_PREVIOUS: OTHER,
    });
    expect(doctorLine(left.stdout, "chain head")).toEqual({
      status: "warn",
      detail: expect.stringMatching(
        /^FLAGTRAIL_SIGNING_KEY_PREVIOUS is set but the chain head is already signed with FLAGTRAIL_SIGNING_KEY: the rotation is done, remove the old key/,
      ),
    });

    // Another key: the next sync is refused, and doctor says so in the sync's words.
    const wrong = await run(db, ["doctor"], { FLAGTRAIL_SIGNING_KEY: OTHER });
    const refusal = `the chain head's HMAC-SHA256 signature does not match the record it was made over (seq ${seq}, `;
    expect(doctorLine(wrong.stdout, "chain head")).toEqual({
      status: "fail",
      detail: expect.stringContaining(`the next sync will be refused: ${refusal}`),
    });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/check(s)? failed: .*chain head/);
    const refused = await run(db, ["sync", "--quiet", "--no-entities"], { FLAGTRAIL_SIGNING_KEY: OTHER });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`flagtrail: T${refusal.slice(1)}`);
    for (const out of [before, ok, left, wrong, refused])
      expect(out.stdout + out.stderr).not.toMatch(/head-signature-key/);
  });
});
