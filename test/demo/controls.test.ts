// The demo's last step turns the report into a control: an example config of controls beside the
// reports, a check over the report's month, and hints (check, waive) that work as printed.
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { DEMO_CONFIG_FILE } from "../../src/demo/controls.ts";
import { runCliInProcess } from "../helpers/inProcessCli.ts";

/** The words of a printed hint after `flagtrail`, as a shell would split them (quotes removed). */
function hintArgs(stdout: string, command: "check" | "waive"): string[] {
  const line = stdout.split("\n").find((l) => new RegExp(`^ {2}\\S.* ${command} --db `).test(l));
  expect(line, `no ${command} hint in:\n${stdout}`).toBeDefined();
  const words = line!.slice(line!.indexOf(` ${command} `) + 1).match(/'[^']*'|"[^"]*"|\S+/g) ?? [];
  return words.map((w) => (/^['"]/.test(w) ? w.slice(1, -1) : w));
}

interface JsonFinding {
  id: string;
  control: string;
  message: string;
  waiver: { by: string; reason: string } | null;
}

describe("the demo's controls", () => {
  it("writes an example config once, checks the month with it, and its check and waive hints work", async () => {
    const dir = mkdtempSync(join(tmpdir(), "flagtrail-demo-controls-"));
    const args = ["demo", "--db", join(dir, "demo.db"), "--out", join(dir, "reports"), "--records", "1000"];
    const first = await runCliInProcess([...args, "--days", "120"]);
    expect(first.code, first.stderr).toBe(0);
    const configPath = join(dir, "reports", DEMO_CONFIG_FILE);
    const config = JSON.parse(readFileSync(configPath, "utf8")) as { controls: { id: string }[] };
    expect(first.stdout).toContain(
      `Controls of ${configPath} (written by the demo: edit it and check again)`,
    );

    // The counts printed are the findings `check` itself returns for the hint's period.
    const check = hintArgs(first.stdout, "check");
    expect(check).toEqual(expect.arrayContaining(["--config", configPath, "--from", "--to"]));
    const json = await runCliInProcess([...check, "--format", "json"]);
    expect(json.code).toBe(1);
    expect(json.stderr).toMatch(/unwaived findings at or above low severity/);
    const findings = JSON.parse(json.stdout) as JsonFinding[];
    expect(findings.length).toBeGreaterThan(0);
    for (const control of config.controls) {
      const open = findings.filter((f) => f.control === control.id && f.waiver === null).length;
      expect(first.stdout).toMatch(
        new RegExp(`^ {2}${control.id} \\([a-z-]+, [a-z]+\\): ${open} open$`, "m"),
      );
    }
    expect(first.stdout).toContain(`It exits 1 on these ${findings.length} findings`);

    // The report is written with the same config: its Controls section counts what the demo printed, and
    // the no-self-approval control's count (approvals and changes) is split on screen and in the report,
    // whose Self-approvals list the approvals alone.
    const md = readFileSync(
      join(dir, "reports", readdirSync(join(dir, "reports")).find((f) => /^compliance_.*\.md$/.test(f))!),
      "utf8",
    );
    expect(md).toContain("## Controls");
    for (const control of config.controls) {
      const open = findings.filter((f) => f.control === control.id && f.waiver === null).length;
      expect(md).toMatch(new RegExp(`^\\| ${control.id} \\|.* \\| ${open} \\| 0 \\| ${open} \\|$`, "m"));
    }
    const self = findings.filter((f) => f.control === "self-approval");
    const approvals = self.filter((f) => f.message.startsWith("review approved")).length;
    expect(self.length).toBeGreaterThan(approvals);
    expect(first.stdout).toContain(
      `    ${approvals} approvals by their own requester (the report's Self-approvals) and ${self.length - approvals} changes made by the person who approved their review`,
    );
    expect(md).toContain(
      `the control self-approval has ${self.length} findings: ${approvals} approvals by the requester`,
    );
    expect(md).toMatch(new RegExp(`\\| Self-approvals \\| \\[${approvals}\\]`));

    // The waive hint names an open finding; once waived, the next demo run counts it as waived.
    const waive = hintArgs(first.stdout, "waive");
    const waived = findings.find((f) => f.id === waive[3]);
    expect(waived?.waiver).toBeNull();
    const waiveRun = await runCliInProcess(waive);
    expect(waiveRun.code, waiveRun.stderr).toBe(0);

    // The user's edit of the config survives a re-run: the demo writes the file only when it is missing.
    const kept = { controls: config.controls.filter((c) => c.id === waived!.control) };
    writeFileSync(configPath, JSON.stringify(kept));
    const second = await runCliInProcess([...args, "--days", "120"]);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toContain(`Controls of ${configPath}, checked over`);
    const stillOpen = findings.filter((f) => f.control === waived!.control).length - 1;
    expect(second.stdout).toMatch(
      new RegExp(`^ {2}${waived!.control} \\([a-z-]+, [a-z]+\\): ${stillOpen} open, 1 waived$`, "m"),
    );
    expect(second.stdout).not.toMatch(/^ {2}fresh-sync /m);
    expect(readFileSync(configPath, "utf8")).toBe(JSON.stringify(kept));
  }, 180_000);
});
