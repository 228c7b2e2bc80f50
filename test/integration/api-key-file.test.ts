// Issue 13, item 9: a key on the command line leaks (ps, npm's debug log under npx), so the key can come
// from a file, and --help of sync and daemon says which way to prefer. The sync with the key file is
// spawned (end to end); the help texts and the unreadable file's sentence come from the CLI in this process.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runCliInProcess } from "../helpers/inProcessCli.ts";
import { runCli } from "../helpers/runCli.ts";
import { daysAgo, simEnv, storedIds, tempDbPath, useTestSimulator } from "../helpers/simSync.ts";

const startSim = useTestSimulator();

describe("the API key from a file", () => {
  it.each(["sync", "daemon"])(
    "%s --help steers to the variable or the key file and warns",
    async (command) => {
      const { code, stdout } = await runCliInProcess([command, "--help"]);
      expect(code).toBe(0);
      const help = stdout.replace(/\s+/g, " ");
      expect(help).toContain(
        "--api-key-file <path> file holding the console API key, trimmed; keep it mode 0600 (env: FLAGTRAIL_API_KEY_FILE)",
      );
      expect(help).toContain("prefer FLAGTRAIL_API_KEY or --api-key-file");
      expect(help).toContain("visible to other users (ps)");
      expect(help).toContain("npm's debug log");
    },
  );

  it("syncs with FLAGTRAIL_API_KEY_FILE alone, and an unreadable one is one sentence, exit 2", async () => {
    const sim = await startSim({ records: 50, days: 20 });
    const dir = mkdtempSync(join(tmpdir(), "flagtrail-keyfile-"));
    const keyFile = join(dir, "key");
    writeFileSync(keyFile, `${sim.settings.apiKey}\n`, { mode: 0o600 });
    const db = tempDbPath();
    const env = { ...simEnv(sim, db), FLAGTRAIL_API_KEY: undefined, FLAGTRAIL_API_KEY_FILE: keyFile };

    const ok = await runCli(["sync", "--since", daysAgo(21), "--quiet"], { env });
    expect(ok.code).toBe(0);
    expect(storedIds(db)).toHaveLength(50);

    const unreadable = await runCliInProcess(["sync", "--quiet"], {
      env: { ...env, FLAGTRAIL_API_KEY_FILE: join(dir, "nope") },
    });
    expect(unreadable.code).toBe(2);
    expect(unreadable.stderr).toBe(
      `flagtrail: Cannot read the API key file ${join(dir, "nope")} (ENOENT).\n`,
    );
  });
});
