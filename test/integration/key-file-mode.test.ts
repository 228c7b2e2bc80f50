// Issue 26: a key file other users can read was used silently. It is still used (a deployment must not
// break on it), with one warning line on stderr, as ssh warns of an unprotected private key.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { warnIfKeyFileOpen } from "../../src/config.ts";
import { runCliInProcess } from "../helpers/inProcessCli.ts";
import { runCli } from "../helpers/runCli.ts";
import { daysAgo, simEnv, storedIds, tempDbPath, useTestSimulator } from "../helpers/simSync.ts";

const startSim = useTestSimulator();

function keyFile(key: string, mode: number): string {
  const path = join(mkdtempSync(join(tmpdir(), "flagtrail-keymode-")), "key");
  writeFileSync(path, `${key}\n`, { mode });
  return path;
}

const warningFor = (path: string, mode: string) =>
  `flagtrail: warning: the API key file ${path} is readable by other users (mode ${mode}); chmod 600 it.\n`;

describe("a key file readable by others", () => {
  it("warns once per file, names the mode, and says nothing of a 0600 or missing file", () => {
    const lines: string[] = [];
    const write = (line: string) => lines.push(line);
    const open = keyFile("console-secret-abc", 0o644);
    warnIfKeyFileOpen(open, write);
    warnIfKeyFileOpen(open, write);
    warnIfKeyFileOpen(keyFile("console-secret-abc", 0o600), write);
    warnIfKeyFileOpen(join(tmpdir(), "flagtrail-no-such-key-file"), write);
    expect(lines).toEqual([warningFor(open, "0644")]);
    expect(lines.join("")).not.toContain("console-secret-abc");
  });

  it("sync uses it and warns in one line on stderr; a 0600 file gives no warning (real CLI)", async () => {
    const sim = await startSim({ records: 30, days: 10 });
    const db = tempDbPath();
    const base = { ...simEnv(sim, db), FLAGTRAIL_API_KEY: undefined };
    const open = keyFile(sim.settings.apiKey, 0o640);
    const warned = await runCli(["sync", "--since", daysAgo(11), "--quiet", "--no-entities"], {
      env: { ...base, FLAGTRAIL_API_KEY_FILE: open },
    });
    expect(warned.code).toBe(0);
    expect(warned.stderr).toBe(warningFor(open, "0640"));
    expect(storedIds(db)).toHaveLength(30);

    // In this process (the warned sync above is the spawned one).
    const closed = await runCliInProcess(
      ["sync", "--quiet", "--no-entities", "--api-key-file", keyFile(sim.settings.apiKey, 0o600)],
      {
        env: base,
      },
    );
    expect(closed.code).toBe(0);
    expect(closed.stderr).toBe("");
  });
});
