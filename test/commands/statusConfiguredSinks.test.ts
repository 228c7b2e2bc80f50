// `flagtrail status` listed a SIEM sink only once it had delivered (a cursor in the store): a sink of the
// config that never delivered (its receiver unreachable since day one, or no daemon yet) was not shown at
// all, with every record and its findings waiting. Status now reads the config when there is one (never
// needs one) and lists such a sink too, by name: its url carries a token that must not be printed. A
// config it cannot use is said on stderr; the store's status is still printed, exit 0.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningSimulator } from "../../src/simulator/index.ts";
import { ENGINES, type TestStore, testStore } from "../controls/engines.ts";
import { API } from "../controls/plant.ts";
import { runCliInProcess } from "../helpers/inProcessCli.ts";
import { freePort } from "../helpers/ports.ts";
import { daysAgo, simEnv, startTestSimulator } from "../helpers/simSync.ts";

const TOKEN = "never-print-this-token-5521";

describe.each(ENGINES)("status of configured SIEM sinks that never delivered, on %s", (engine) => {
  let sim: RunningSimulator;
  let store: TestStore;
  let env: Record<string, string>;
  let config: string;
  /** A working directory without a flagtrail.config.json. */
  let bare: string;
  /** The sinks' receiver, where nothing listens. */
  let down: string;

  beforeAll(async () => {
    sim = await startTestSimulator({ records: 20, days: 3, timeZone: "UTC" });
    store = await testStore(engine);
    bare = mkdtempSync(join(tmpdir(), "flagtrail-status-"));
    // Nothing listens there: the sink never delivers.
    down = `http://127.0.0.1:${await freePort()}`;
    config = store.config(
      {
        controls: [{ id: "ra", kind: "restricted-actor", severity: "low", actors: ["CONSOLE API"] }],
        sinks: [
          { name: "siem", kind: "http", url: `${down}/in?token=${TOKEN}`, retries: 0 },
          { name: "hook", kind: "webhook", url: `${down}/hook?token=${TOKEN}`, secretEnv: "SCS_SECRET" },
        ],
      },
      "sinks.json",
    );
    env = simEnv(sim, store.db, { FLAGTRAIL_CONFIG: config, SCS_SECRET: "s" });
    sim.control.append([
      { at: sim.control.now(), name: "ctl_scs_gate", actionType: "gate_update", actor: API },
    ]);
    const sync = await runCliInProcess(["sync", "--since", daysAgo(2), "--quiet", "--no-entities"], { env });
    expect(sync.code, sync.stderr).toBe(0);
    // Queued for both sinks, not delivered (no --notify).
    const check = await runCliInProcess(["check"], { env });
    expect(check.code, check.stderr).toBe(1);
  });

  afterAll(async () => {
    await sim?.close();
  });

  const total = async () =>
    Number((await store.query<{ n: number }>("SELECT count(*) AS n FROM audit_logs"))[0]!.n);

  it("lists the config's SIEM sink with what waits for it, never its url", async () => {
    const n = await total();
    expect(n).toBeGreaterThan(0);
    const text = await runCliInProcess(["status"], { env, cwd: bare });
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain(
      `\nSIEM sinks:\n  sink "siem": no record delivered yet, ${n} behind; 1 finding waiting\n`,
    );
    // The webhook is an alert sink: on the Alerts line, not among the SIEM sinks.
    expect(text.stdout).not.toContain('  sink "hook"');
    const json = await runCliInProcess(["status", "--json", "--config", config], {
      cwd: bare,
      env: { FLAGTRAIL_DB: store.db },
    });
    expect(json.code, json.stderr).toBe(0);
    expect((JSON.parse(json.stdout) as { sinks: unknown }).sinks).toEqual([
      { sink: "siem", delivered: null, behind: n, findingsWaiting: 1, stuck: null },
    ]);
    for (const out of [text.stdout, text.stderr, json.stdout, json.stderr]) {
      expect(out).not.toContain(TOKEN);
      expect(out).not.toContain(down);
    }
  });

  it("without a config lists what the store knows only, as before", async () => {
    const run = await runCliInProcess(["status", "--json"], { cwd: bare, env: { FLAGTRAIL_DB: store.db } });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toBe("");
    expect((JSON.parse(run.stdout) as { sinks: unknown }).sinks).toEqual([]);
  });

  it("a config it cannot use is said on stderr, and the store's status still printed", async () => {
    const missing = join(bare, "missing.json");
    const gone = await runCliInProcess(["status", "--config", missing], {
      cwd: bare,
      env: { FLAGTRAIL_DB: store.db },
    });
    expect(gone.code).toBe(0);
    expect(gone.stderr).toBe(
      `flagtrail: warning: Cannot read the config file ${missing} (ENOENT); SIEM sinks that never delivered are not listed.\n`,
    );
    expect(gone.stdout).toMatch(/^Controls: 1 open finding \(ra 1\)/m);
    expect(gone.stdout).not.toContain("SIEM sinks:");
    // A sink the config refuses: the warning names the file and the field, never the url or its token.
    const bad = join(bare, "bad.json");
    writeFileSync(
      bad,
      JSON.stringify({ sinks: [{ name: "siem", kind: "http", url: `ftp://x/in?token=${TOKEN}` }] }),
    );
    const refused = await runCliInProcess(["status"], {
      cwd: bare,
      env: { FLAGTRAIL_DB: store.db, FLAGTRAIL_CONFIG: bad },
    });
    expect(refused.code).toBe(0);
    expect(refused.stderr).toBe(
      `flagtrail: warning: ${bad}: sink "siem": url: url must be an http:// or https:// address; SIEM sinks that never delivered are not listed.\n`,
    );
    expect(refused.stdout + refused.stderr).not.toContain(TOKEN);
  });
});
