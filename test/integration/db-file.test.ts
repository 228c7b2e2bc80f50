// `--db-file PATH`: the store's path or URL read from a file (trimmed), so that a PostgreSQL password
// is not on the command line where `ps` shows it. Unreadable or empty: a usage error naming the path.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runCliInProcess } from "../helpers/inProcessCli.ts";
import { runCli } from "../helpers/runCli.ts";

describe("--db-file", () => {
  it("reads the store's location from the file; an empty or missing file is a usage error", async () => {
    const dir = mkdtempSync(join(tmpdir(), "flagtrail-dbfile-"));
    const store = join(dir, "missing.db");
    const file = join(dir, "db-url");
    writeFileSync(file, `  ${store}\n`);
    const read = await runCli(["status", "--db-file", file]);
    expect(read.code).toBe(1);
    expect(read.stderr).toBe(`flagtrail: No flagtrail database at ${store}. Run \`flagtrail sync\` first.\n`);

    writeFileSync(file, "\n");
    const empty = await runCliInProcess(["status", "--db-file", file]);
    expect(empty.code).toBe(2);
    expect(empty.stderr).toBe(`flagtrail: The database URL file ${file} is empty.\n`);
    const missing = await runCliInProcess([
      "report",
      "--from",
      "2024-01-01",
      "--to",
      "2024-01-02",
      "--db-file",
      store,
    ]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toBe(`flagtrail: Cannot read the database URL file ${store} (ENOENT).\n`);
    const help = await runCliInProcess(["sync", "--help"]);
    expect(help.stdout).toMatch(/--db-file <path>/);
    expect(help.stdout).toMatch(/visible to other users \(ps\)/);
  });
});
