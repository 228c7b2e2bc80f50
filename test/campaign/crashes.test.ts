// Campaign (issue 13), part 3: kill -9 of `report` and of `daemon` at random moments, and hostile
// record names through sync, report and sql. The runs killed are processes of their own; the CLI's other
// runs (syncs before, checks and re-runs after) are in this process.
import { existsSync, mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCliInProcess } from "../helpers/inProcessCli.ts";
import { daysAgo, simEnv, tempDbPath, useTestSimulator, withDb } from "../helpers/simSync.ts";
import {
  assertSoundSubset,
  assertVerifyOk,
  type FigureRow,
  integrity,
  random,
  runAndKill,
  SCALE,
  SEED,
  SIZES,
  setEquality,
  TIMEOUT,
  writeFigures,
} from "./lib.ts";

const startSim = useTestSimulator();
const rows: FigureRow[] = [];
afterAll(() => writeFigures("3-crashes", rows));

const DAYS = SIZES.faultDays;
const FROM = daysAgo(DAYS);
const TO = daysAgo(1);
const MANIFEST = `manifest_${FROM}_${TO}.json`;

/** Hostile names that begin a CSV cell raw (a spreadsheet would run them as formulas). */
function formulaCells(csv: string, names: string[]): string[] {
  return names
    .filter((name) => /^[=+\-@\t]/.test(name))
    .filter((name) => {
      const start = name.slice(0, 10).replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
      return new RegExp(`(^|,)"?${start}`, "m").test(csv);
    });
}

/** Hidden half-written files a report leaves in its directory. */
function partials(dir: string): string[] {
  return existsSync(dir) ? readdirSync(dir).filter((name) => name.endsWith(".partial")) : [];
}

describe(`campaign (${SCALE}): kill -9 of report and daemon, hostile records`, () => {
  it(
    "publishes a report set that matches its manifest after kill -9 of report",
    async () => {
      const sim = await startSim({ seed: SEED, records: SIZES.faultRecords * 2, days: DAYS });
      const db = tempDbPath("flagtrail-campaign-");
      const env = simEnv(sim, db);
      expect((await runCliInProcess(["sync", "--since", daysAgo(DAYS + 2), "--quiet"], { env })).code).toBe(
        0,
      );
      const out = mkdtempSync(join(tmpdir(), "flagtrail-campaign-report-"));
      // Each run replaces the previous (killed) one's files: --force.
      const args = ["report", "--db", db, "--from", FROM, "--to", TO, "--out", out, "--force"];
      let kills = 0;
      let contradictions = 0;
      for (let i = 0; i < SIZES.reportKills; i++) {
        // Half the kills land while files are being written and renamed (after the first
        // `.partial` appears), the others anywhere from the spawn.
        const whileWriting = random.next() < 0.5;
        const result = whileWriting
          ? await runAndKill(args, env, random.int(0, 150), () => partials(out).length > 0)
          : await runAndKill(args, env, random.int(500, 3000));
        if (result.killed) kills++;
        expect(integrity(db)).toBe("ok");
        if (existsSync(join(out, MANIFEST))) {
          const check = await runCliInProcess(["verify", "--db", db, "--manifest", join(out, MANIFEST)], {
            env,
          });
          if (check.code !== 0) contradictions++;
        }
      }
      const leftBehind = partials(out).length;
      const final = await runCliInProcess(args, { env });
      expect(final.code, final.stderr).toBe(0);
      await assertVerifyOk(db, ["--manifest", join(out, MANIFEST)]);
      rows.push({
        case: "report kill -9",
        outcome: contradictions === 0 && partials(out).length === 0 ? "consistent" : "DEFECT 7",
        kills,
        setsContradictingManifest: contradictions,
        partialsAfterKills: leftBehind,
        partialsAfterFinalRun: partials(out),
      });
      // Issue 13 defect 7: a killed report must never leave a set that contradicts its manifest,
      // and stale `.partial` files are cleaned up by the next run.
      expect(contradictions).toBe(0);
      expect(partials(out)).toEqual([]);
    },
    TIMEOUT,
  );

  it(
    "loses nothing and frees its lease after kill -9 of daemon",
    async () => {
      const sim = await startSim({
        seed: SEED,
        records: SIZES.faultRecords * 2,
        days: DAYS,
        faults: { latencyMs: 10 },
      });
      const db = tempDbPath("flagtrail-campaign-");
      const env = simEnv(sim, db);
      const out = mkdtempSync(join(tmpdir(), "flagtrail-campaign-daemon-"));
      const args = [
        "daemon",
        "--once",
        "--report",
        "daily",
        "--out",
        out,
        "--since",
        daysAgo(DAYS + 2),
        "--quiet",
      ];
      let kills = 0;
      for (let i = 0; i < SIZES.daemonKills; i++) {
        const result = await runAndKill(args, env, random.int(500, 2500));
        if (result.killed) kills++;
        assertSoundSubset(sim, db);
      }
      const final = await runCliInProcess(args, { env });
      expect(final.code, final.stderr).toBe(0);
      const equality = setEquality(sim, db);
      expect(equality.equal, JSON.stringify(equality)).toBe(true);
      expect(integrity(db)).toBe("ok");
      await assertVerifyOk(db);
      const leases = withDb(db, (d) => d.prepare("SELECT count(*) FROM leases").pluck().get());
      expect(leases).toBe(0);
      rows.push({
        case: "daemon kill -9",
        outcome: "set equal, verify ok, no lease",
        kills,
        records: sim.control.size(),
      });
    },
    TIMEOUT,
  );

  it(
    "keeps hostile names harmless in CSV, Markdown and sql output, and exact in sql json",
    async () => {
      const sim = await startSim({ seed: SEED, records: 50, days: DAYS });
      const at = sim.control.now() - 3 * 86_400_000;
      const hostile = [
        '=HYPERLINK("http://evil.example","x")',
        "+1+cmd|' /C calc'!A0",
        "-2+3",
        "@SUM(A1:A9)",
        "\tleading tab",
        "bell\u0007 esc\u001b[31mred\u001b[0m bs\u0008 nul\u0000 end",
        "pipe | and\nnewline | `code` <script>alert(1)</script>",
        "\u202Eright-to-left override",
        "x".repeat(5000),
      ];
      sim.control.append(hostile.map((name, i) => ({ at: at + i, name, actionType: "gate_update" })));
      const db = tempDbPath("flagtrail-campaign-");
      const env = simEnv(sim, db);
      expect((await runCliInProcess(["sync", "--since", daysAgo(DAYS + 2), "--quiet"], { env })).code).toBe(
        0,
      );
      expect(setEquality(sim, db).equal).toBe(true);
      const out = mkdtempSync(join(tmpdir(), "flagtrail-campaign-hostile-"));
      const report = await runCliInProcess(["report", "--db", db, "--from", FROM, "--to", TO, "--out", out], {
        env,
      });
      expect(report.code, report.stderr).toBe(0);
      const texts = readdirSync(out).map((name) => [name, readFileSync(join(out, name), "utf8")] as const);
      const markdown = texts
        .filter(([name]) => name.endsWith(".md"))
        .map(([, text]) => text)
        .join("");
      const csvs = texts
        .filter(([name]) => name.endsWith(".csv"))
        .map(([, text]) => text)
        .join("");
      const json = await runCliInProcess(
        ["sql", "--db", db, "--format", "json", "SELECT name FROM audit_logs"],
        {
          env,
        },
      );
      expect(json.code).toBe(0);
      const names = new Set((JSON.parse(json.stdout) as { name: string }[]).map((r) => r.name));
      const exact = hostile.filter((name) => names.has(name)).length;
      const table = await runCliInProcess(["sql", "--db", db, "SELECT name FROM audit_logs"], { env });
      expect(table.code).toBe(0);
      const controlChars = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/;
      const findings = {
        exactInSqlJson: `${exact}/${hostile.length}`,
        csvFormulaCells: formulaCells(csvs, hostile).length,
        hostileNamesInCsv: hostile.filter((name) => csvs.includes(name.slice(1, 12))).length,
        controlCharsInMarkdown: controlChars.test(markdown),
        controlCharsInSqlTable: controlChars.test(table.stdout),
      };
      rows.push({
        case: "hostile records",
        outcome:
          findings.csvFormulaCells > 0 || findings.controlCharsInMarkdown || findings.controlCharsInSqlTable
            ? "DEFECT 6"
            : "harmless",
        ...findings,
      });
      expect(exact).toBe(hostile.length);
      expect(findings.hostileNamesInCsv).toBeGreaterThan(0);
      expect(findings.csvFormulaCells).toBe(0);
      // Issue 13 defect 6: ESC, BEL, BS, NUL must not reach terminal or Markdown output raw.
      expect(findings.controlCharsInMarkdown).toBe(false);
      expect(findings.controlCharsInSqlTable).toBe(false);
    },
    TIMEOUT,
  );
});
