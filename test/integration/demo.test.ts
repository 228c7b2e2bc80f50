// `flagtrail demo` end to end, as CI runs it: simulator → backfill → reports, then an incremental re-run.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { DEMO_DEFAULTS } from "../../src/demo/defaults.ts";
import { runDemo } from "../../src/demo/runDemo.ts";
import { MARKDOWN_CAPS } from "../../src/report/sections/capped.ts";
import { runCliInProcess } from "../helpers/inProcessCli.ts";
import { cliEnv, runCli } from "../helpers/runCli.ts";
import { withDb } from "../helpers/simSync.ts";

describe("flagtrail demo", () => {
  it("backfills the simulated history, writes last month's reports, and re-runs incrementally", async () => {
    const dir = mkdtempSync(join(tmpdir(), "flagtrail-demo-"));
    const db = join(dir, "demo.db");
    const out = join(dir, "reports");
    // 1,000 records: what this checks (the hints, reports, manifest, incremental re-run) does not depend
    // on the history's size; the default world's test below is the big one.
    const args = ["demo", "--db", db, "--out", out, "--records", "1000", "--days", "120"];

    const first = await runCli(args, { cwd: dir, timeoutMs: 120_000 });
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toContain("First run: backfilling the whole history.");
    // The seeded history is --records' size, the live records apart: not one total that matches nothing given.
    expect(first.stdout).toMatch(
      /^Simulator on http:\/\/127\.0\.0\.1:\d+: 1000 audit records over the 120 days before \d{4}-\d{2}-\d{2} \(UTC\) and \d+ since \(seed 2026, server zone America\/Los_Angeles\)\.$/m,
    );
    expect(first.stdout).toContain("flagtrail.js sql --db");
    // Run from an empty directory, not the checkout: the hints name the script that ran, no npx or npm.
    expect(first.stdout).not.toMatch(/npx |npm run/);
    const html = first.stdout.match(/Open the compliance report in a browser .*: (\S+\.html)$/m)?.[1];
    expect(html).toBeDefined();
    // --out was absolute: so are the printed paths (a relative one is printed from the working directory).
    expect(html!.startsWith(`${out}/`)).toBe(true);
    expect(readFileSync(html!, "utf8")).toMatch(/^<!DOCTYPE html>/i);
    const stored = withDb(db, (d) => d.prepare("SELECT count(*) FROM audit_logs").pluck().get() as number);
    expect(stored).toBeGreaterThanOrEqual(1000);

    // Every file the manifest lists exists with the hash it records, and the demo printed its path.
    const manifestPath = first.stdout.match(/\S*manifest_\d{4}-\d{2}-\d{2}_\d{4}-\d{2}-\d{2}\.json/)?.[0];
    expect(manifestPath).toBeDefined();
    const manifest = JSON.parse(readFileSync(resolve(dir, manifestPath!), "utf8")) as {
      files: { name: string; sha256: string }[];
    };
    expect(manifest.files.map((f) => f.name).sort()).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^compliance_.*\.md$/),
        expect.stringMatching(/^config-edits_.*\.csv$/),
      ]),
    );
    for (const file of manifest.files) {
      const bytes = readFileSync(join(out, file.name));
      expect(createHash("sha256").update(bytes).digest("hex")).toBe(file.sha256);
    }
    expect(manifest.files.map((f) => f.name)).toContainEqual(expect.stringMatching(/^compliance_.*\.html$/));
    // The whole entity history is read: the report does not call it partial.
    const compliance = manifest.files.find((f) => /^compliance_.*\.md$/.test(f.name))?.name as string;
    const md = readFileSync(join(out, compliance), "utf8");
    expect(md).toMatch(
      /Entity history, as of the last entity pass: config versions read for (\d+) of \1 edited configs/,
    );
    expect(md).toContain("Nothing is pending.");
    expect(md).not.toContain("Partial");

    // Every command the demo suggests works where it was suggested (issue 26: they failed with E404).
    const hints = first.stdout.split("\n").filter((line) => /^ {2}\S+flagtrail\.js (sql|verify) /.test(line));
    expect(hints).toHaveLength(3);
    for (const hint of hints) {
      const ran = spawnSync("sh", ["-c", hint.trim()], { cwd: dir, env: cliEnv(), encoding: "utf8" });
      expect(ran.status, `${hint}\n${ran.stderr}`).toBe(0);
    }
    expect(first.stdout).toMatch(/Run the same command again to see an incremental sync\.$/m);

    // The re-runs and checks in this process (the first run is the end-to-end one).
    const second = await runCliInProcess(args);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toContain("Incremental sync");
    const requests = Number(second.stdout.match(/requests (\d+)/)?.[1]);
    const firstRequests = Number(first.stdout.match(/requests (\d+)/)?.[1]);
    expect(requests).toBeLessThan(firstRequests / 4);
    const mutations = withDb(db, (d) => d.prepare("SELECT count(*) FROM audit_log_revisions").pluck().get());
    expect(mutations).toBe(0);
    const verify = await runCliInProcess(["verify", "--db", db]);
    expect(verify.code, verify.stdout + verify.stderr).toBe(0);

    // Another world on the same database would serve the same ids with other content: refused.
    const other = await runCliInProcess([
      ...args.slice(0, -4),
      "--records",
      "1000",
      "--days",
      "120",
      "--seed",
      "7",
    ]);
    expect(other.code).toBe(2);
    expect(other.stderr).toContain("--seed 2026 --records 1000 --days 120");
  }, 300_000);

  it("the default world: its whole entity history, more than a first sync's default budget reads", async () => {
    const dir = mkdtempSync(join(tmpdir(), "flagtrail-demo-default-"));
    const out = join(dir, "reports");
    const result = await runDemo({
      dbPath: join(dir, "demo.db"),
      outDir: out,
      seed: DEMO_DEFAULTS.seed,
      records: DEMO_DEFAULTS.records,
      days: DEMO_DEFAULTS.days,
    });
    const entities = result.sync.entities;
    // The default budget (at least 50 requests, one per config or layer) would have left some pending.
    expect((entities?.configs ?? 0) + (entities?.layers ?? 0)).toBeGreaterThan(50);
    expect(entities).toMatchObject({ budget: null, pending: 0 });
    const compliance = result.report.files.find((f) => /^compliance_.*\.md$/.test(f.name));
    const md = readFileSync(compliance?.path as string, "utf8");
    const configs = entities?.configs ?? 0;
    expect(md).toContain(`config versions read for ${configs} of ${configs} edited configs`);
    expect(md).toContain("Nothing is pending.");
    expect(md).not.toContain("Partial");
    // The readable summary stays readable: its long tables capped (141 KB before MARKDOWN_CAPS), each
    // saying so and naming the CSV that holds every row.
    // The Controls table comes first, each control's findings at the end (the demo's: 56 KB of 143 KB in
    // the month its run of 2026-11-27 reported): at most 100 a control, saying so, the findings CSV
    // holding them all. The rest keeps its budget.
    const summaryAt = md.indexOf("\n## Summary");
    const findingsAt = md.indexOf("\n## Control findings");
    const parametersAt = md.indexOf("\n## Report parameters");
    expect(summaryAt).toBeGreaterThan(0);
    expect(findingsAt).toBeGreaterThan(summaryAt);
    expect(parametersAt).toBeGreaterThan(findingsAt);
    expect(md.slice(0, summaryAt)).toContain("## Controls");
    for (const part of md
      .slice(findingsAt, parametersAt)
      .split(/\n### /)
      .slice(1)) {
      const total = Number(part.match(/^\S+: (\d+) findings?\n/)?.[1]);
      const rows = part.split("\n").filter((line) => /^\| [\w.-]+:\S+ \|/.test(line)).length;
      expect(rows).toBe(Math.min(total, 100));
      if (total > 100)
        expect(part).toContain("The first 100 are listed; every one is a row of the findings CSV.");
    }
    expect(Buffer.byteLength(md.slice(0, findingsAt) + md.slice(parametersAt))).toBeLessThanOrEqual(100_000);
    expect(md).toMatch(
      new RegExp(
        `\\*\\*${MARKDOWN_CAPS.entities} of \\d+ configs shown\\*\\*.*\`config-edits_[\\d_-]+\\.csv\``,
      ),
    );
  }, 600_000);
});
