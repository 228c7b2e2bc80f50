// CSVs a spreadsheet reads as UTF-8 by default (issue 9): a byte-order mark first unless --no-bom, and
// the manifest's hashes (and verify) agree with the bytes either way.
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { writeReports } from "../../src/report/writeReports.ts";
import { verifyManifest } from "../../src/verify/manifest.ts";
import { runCli } from "../helpers/runCli.ts";
import { buildScenarioStore, SCENARIO, scenarioOnDisk } from "./scenario.ts";

const BOM = Buffer.from([0xef, 0xbb, 0xbf]);
const CSVS = [
  `experiment-state-changes_${SCENARIO.from}_${SCENARIO.to}_Europe-Berlin.csv`,
  `config-edits_${SCENARIO.from}_${SCENARIO.to}_Europe-Berlin.csv`,
  `unreviewed-changes_${SCENARIO.from}_${SCENARIO.to}_Europe-Berlin.csv`,
];

describe("CSV byte-order mark", () => {
  it("starts every CSV with a UTF-8 BOM by default, none with bom: false; hashes and verify agree", async () => {
    const store = buildScenarioStore(":memory:");
    const dir = mkdtempSync(join(tmpdir(), "flagtrail-bom-"));
    const withBom = await writeReports({ store, ...SCENARIO, outDir: join(dir, "bom") });
    const without = await writeReports({ store, ...SCENARIO, outDir: join(dir, "plain"), bom: false });
    store.close();
    for (const name of CSVS) {
      const a = readFileSync(join(dir, "bom", name));
      const b = readFileSync(join(dir, "plain", name));
      expect(a.subarray(0, 3)).toEqual(BOM);
      expect(b.subarray(0, 4).toString()).toBe("time");
      expect(a.subarray(3)).toEqual(b);
      const listed = withBom.files.find((f) => f.name === name)!;
      expect(listed).toMatchObject({ bytes: a.length, sha256: createHash("sha256").update(a).digest("hex") });
    }
    // The Markdown is not a spreadsheet file: no mark.
    const md = readFileSync(join(dir, "bom", `compliance_${SCENARIO.from}_${SCENARIO.to}_Europe-Berlin.md`));
    expect(md.subarray(0, 1).toString()).toBe("#");
    for (const result of [withBom, without])
      await expect(verifyManifest(result.manifestPath, undefined)).resolves.toMatchObject({ files: 4 });
  });

  it("report --no-bom omits it on the command line", async () => {
    const { dir, reportArgs } = scenarioOnDisk("flagtrail-bom-cli-", { tz: true });
    const args = [...reportArgs, "--format", "csv"];
    const result = await runCli([...args, "--out", join(dir, "out"), "--no-bom"]);
    expect(result.code).toBe(0);
    for (const name of CSVS)
      expect(
        readFileSync(join(dir, "out", name))
          .subarray(0, 4)
          .toString(),
      ).toBe("time");
  });
});
