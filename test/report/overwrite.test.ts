// Report file names and overwrites (issue 9): the zone is in the names when it is not UTC, and an
// earlier report's file is never replaced silently: refused, or forced and listed in the manifest.
import { createHash } from "node:crypto";
import { appendFileSync, mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ReportExistsError } from "../../src/errors.ts";
import { writeReports } from "../../src/report/writeReports.ts";
import { verifyManifest } from "../../src/verify/manifest.ts";
import { runCliInProcess } from "../helpers/inProcessCli.ts";
import { runCli } from "../helpers/runCli.ts";
import { buildScenarioStore, GENERATED_AT, SCENARIO, scenarioOnDisk } from "./scenario.ts";

const sha = (path: string) => createHash("sha256").update(readFileSync(path)).digest("hex");

describe("report file names and overwrites", () => {
  it("names the zone when it is not UTC, so both readings of the same days sit side by side", async () => {
    const store = buildScenarioStore(":memory:");
    const outDir = mkdtempSync(join(tmpdir(), "flagtrail-names-"));
    await writeReports({ store, ...SCENARIO, outDir, generatedAt: GENERATED_AT });
    await writeReports({ store, ...SCENARIO, timeZone: "UTC", outDir, generatedAt: GENERATED_AT });
    store.close();
    expect(readdirSync(outDir).sort()).toEqual([
      "compliance_2024-03-29_2024-04-01.md",
      "compliance_2024-03-29_2024-04-01_Europe-Berlin.md",
      "config-edits_2024-03-29_2024-04-01.csv",
      "config-edits_2024-03-29_2024-04-01_Europe-Berlin.csv",
      "experiment-state-changes_2024-03-29_2024-04-01.csv",
      "experiment-state-changes_2024-03-29_2024-04-01_Europe-Berlin.csv",
      "manifest_2024-03-29_2024-04-01.json",
      "manifest_2024-03-29_2024-04-01_Europe-Berlin.json",
      "unreviewed-changes_2024-03-29_2024-04-01.csv",
      "unreviewed-changes_2024-03-29_2024-04-01_Europe-Berlin.csv",
    ]);
  });

  it("refuses to replace a file with different content, allows an identical one, and lists forced replacements", async () => {
    const store = buildScenarioStore(":memory:");
    const outDir = mkdtempSync(join(tmpdir(), "flagtrail-overwrite-"));
    const first = await writeReports({ store, ...SCENARIO, outDir, generatedAt: GENERATED_AT });
    const md = join(outDir, "compliance_2024-03-29_2024-04-01_Europe-Berlin.md");
    const manifest = first.manifestPath;
    const before = [sha(md), sha(manifest)];

    // Same content: nothing to protect, nothing listed.
    const same = await writeReports({ store, ...SCENARIO, outDir, generatedAt: GENERATED_AT });
    expect(JSON.parse(readFileSync(same.manifestPath, "utf8")).replaced).toBeUndefined();

    // A later run with the same data differs only in its "generated at": it keeps the earlier one, so
    // every file, the manifest included, comes out byte-identical (issue 26).
    const later = GENERATED_AT + 60_000;
    const rerun = await writeReports({ store, ...SCENARIO, outDir, generatedAt: later });
    expect([sha(md), sha(manifest)]).toEqual(before);
    expect(JSON.parse(readFileSync(rerun.manifestPath, "utf8")).generatedAt).toBe(
      new Date(GENERATED_AT).toISOString(),
    );

    // Other content (here: the earlier file edited): refused, and the old set is left as it was.
    appendFileSync(md, "edited\n");
    const edited = sha(md);
    const refusal = writeReports({ store, ...SCENARIO, outDir, generatedAt: later });
    await expect(refusal).rejects.toThrow(
      `${md} already exists with different content (an earlier report of this period); move it away, or force the replacement, which the manifest then records.`,
    );
    await expect(refusal).rejects.toBeInstanceOf(ReportExistsError);
    expect([sha(md), sha(manifest)]).toEqual([edited, before[1]]);
    expect(readdirSync(outDir).filter((n) => n.startsWith("."))).toEqual([]);

    const forced = await writeReports({ store, ...SCENARIO, outDir, generatedAt: later, force: true });
    store.close();
    const written = JSON.parse(readFileSync(forced.manifestPath, "utf8"));
    expect(written.replaced).toEqual([
      {
        name: "compliance_2024-03-29_2024-04-01_Europe-Berlin.md",
        bytes: first.files.find((f) => f.name.startsWith("compliance_"))!.bytes + "edited\n".length,
        sha256: edited,
      },
    ]);
    await expect(verifyManifest(forced.manifestPath, undefined)).resolves.toMatchObject({ files: 4 });
  });

  it("report exits 1 with one sentence on a second run, and replaces with --force", async () => {
    const { dir, reportArgs } = scenarioOnDisk("flagtrail-overwrite-cli-");
    const args = [...reportArgs, "--out", join(dir, "out")];
    expect((await runCliInProcess(args)).code).toBe(0);
    // The same data again: nothing changed, the run succeeds (issue 26).
    const same = await runCliInProcess(args);
    expect(same.code, same.stderr).toBe(0);
    appendFileSync(join(dir, "out", "compliance_2024-03-29_2024-04-01.md"), "edited\n");
    const again = await runCli(args);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(
      /^flagtrail: \S+compliance_2024-03-29_2024-04-01\.md already exists with different content .*run again with --force to replace it.*\.\n$/,
    );
    expect((await runCliInProcess([...args, "--force"])).code).toBe(0);
  });
});
