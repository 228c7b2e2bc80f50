// Issue 26: every command's --help in one style. An option's help is its text, then at most one
// parenthesis whose parts come in a fixed order: `required`, `one of: …`, `default: …`, `env: NAME`
// (no `(default "4")`, `(env X)` or defaults buried in the text), and every command ends with examples.
// Checked in-process on the program the CLI builds, so an option added later is held to it too.
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Command } from "commander";
import { describe, expect, it } from "vitest";
import { buildProgram } from "../../src/cli.ts";
import { runCliInProcess } from "../helpers/inProcessCli.ts";

const PART = /^(?:required|one of: [^;]+|default: [^;"][^;]*|env: [A-Z][A-Z0-9_]*)$/;
const ORDER = ["required", "one of", "default", "env"];

/** Why one option's help line breaks the style, or undefined when it keeps it. */
function styleProblem(line: string): string | undefined {
  const match = /^(?<text>.*?)(?: \((?<meta>(?:required|one of: |default: |env: )[^()]*)\))?$/.exec(line);
  const text = match?.groups?.text ?? line;
  const meta = match?.groups?.meta;
  if (text.trim() === "") return "no description";
  if (/\(default|default:|\(env[ :]|\benv FLAGTRAIL_|\benv: /i.test(text))
    return "a default or variable outside the final parenthesis";
  if (meta === undefined) return undefined;
  if (text.endsWith(")")) return "two parentheses in a row";
  const parts = meta.split("; ");
  const bad = parts.find((p) => !PART.test(p));
  if (bad !== undefined) return `unknown part "${bad}"`;
  const order = parts.map((p) => ORDER.findIndex((name) => p.startsWith(name)));
  if (order.some((n, i) => i > 0 && n <= (order[i - 1] ?? -1))) return "parts out of order or repeated";
  return undefined;
}

function helpLines(command: Command): { option: string; line: string }[] {
  const help = command.createHelp();
  return help
    .visibleOptions(command)
    .filter((o) => o.long !== "--help")
    .map((o) => ({ option: o.flags, line: help.optionDescription(o) }));
}

const program = buildProgram();

describe("--help style", () => {
  it("recognises the old forms as broken and the style as kept", () => {
    expect(styleProblem('requests in flight at once (default: "4")')).toBeDefined();
    expect(styleProblem("SQLite file (env FLAGTRAIL_DB, default ./flagtrail.db)")).toBeDefined();
    expect(styleProblem("file holding the key (env: FLAGTRAIL_API_KEY_FILE)")).toBeUndefined();
    expect(styleProblem("store (env: FLAGTRAIL_DB; default: ./flagtrail.db)")).toBe(
      "parts out of order or repeated",
    );
    expect(styleProblem("store (default: ./flagtrail.db; env: FLAGTRAIL_DB)")).toBeUndefined();
    expect(styleProblem("days checked (re-read whole) (default: 2)")).toBe("two parentheses in a row");
  });

  it.each(program.commands.map((c) => [c.name(), c] as const))(
    "flagtrail %s: every option's help line has the one form, and the help ends with examples",
    (_name, command) => {
      const problems = helpLines(command)
        .map(({ option, line }) => ({ option, line, problem: styleProblem(line) }))
        .filter((p) => p.problem !== undefined);
      expect(problems).toEqual([]);
      let text = "";
      command.configureOutput({
        writeOut: (chunk) => {
          text += chunk;
        },
      });
      command.outputHelp();
      expect(text).toMatch(/\nExamples:\n {2}\$ \S/);
    },
  );

  // Shared option texts (daemon's of sync's, --db's of --db-file) must not name an option a command lacks.
  it.each(program.commands.map((c) => c.name()))(
    "flagtrail %s: its options' help names only options it has",
    (name) => {
      const command = program.commands.find((c) => c.name() === name);
      if (!command) throw new Error(`${name} missing`);
      const own = new Set(command.options.map((o) => o.long));
      const named = helpLines(command).flatMap(({ line }) => line.match(/--[a-z][a-z-]*/g) ?? []);
      expect(named.filter((flag) => !own.has(flag))).toEqual([]);
    },
  );

  // The signing keys have no option (a key on the command line shows in ps), so without these lines
  // `--help` never named FLAGTRAIL_SIGNING_KEY_PREVIOUS, the way out of a sync refused after a rotation.
  it.each([
    ["sync", ["FLAGTRAIL_SIGNING_KEY", "FLAGTRAIL_SIGNING_KEY_PREVIOUS"]],
    ["daemon", ["FLAGTRAIL_SIGNING_KEY", "FLAGTRAIL_SIGNING_KEY_PREVIOUS"]],
    ["check", ["FLAGTRAIL_SIGNING_KEY"]],
  ] as const)("flagtrail %s --help names the signing keys it reads", (name, variables) => {
    const command = program.commands.find((c) => c.name() === name);
    if (!command) throw new Error(`${name} missing`);
    let text = "";
    command.configureOutput({
      writeOut: (chunk) => {
        text += chunk;
      },
    });
    command.outputHelp();
    const section = /\nEnvironment:\n([\s\S]*?)\n\nExamples:/.exec(text)?.[1] ?? "";
    for (const variable of variables) expect(section).toMatch(new RegExp(`^  ${variable}\\n {6}\\S`, "m"));
    expect(Math.max(...section.split("\n").map((line) => line.length))).toBeLessThanOrEqual(80);
  });

  // The description is the list a user reads before running it; it had fallen behind the checks
  // (free pages, sink secrets). No key and no store here, so doctor sends no request.
  it("flagtrail doctor's description names every check it prints", async () => {
    const doctor = program.commands.find((c) => c.name() === "doctor");
    if (!doctor) throw new Error("doctor missing");
    const dir = mkdtempSync(join(tmpdir(), "flagtrail-help-doctor-"));
    const run = await runCliInProcess(["doctor", "--json"], { cwd: dir });
    const names = (JSON.parse(run.stdout) as { name: string }[]).map((check) => check.name);
    expect(names).toContain("sink secrets");
    const description = doctor.description().toLowerCase();
    expect(names.filter((name) => !description.includes(name))).toEqual([]);
  });

  it("docs/simulator.md lists every option of `flagtrail simulate`", () => {
    const simulate = program.commands.find((c) => c.name() === "simulate");
    if (!simulate) throw new Error("simulate missing");
    const page = readFileSync(new URL("../../docs/simulator.md", import.meta.url), "utf8");
    const missing = simulate.options.map((o) => o.long ?? "").filter((flag) => !page.includes(`\`${flag}`));
    expect(missing).toEqual([]);
  });

  it("marks report's --from and --to as required, and sql's help names no SQLite internals", () => {
    const report = program.commands.find((c) => c.name() === "report");
    const sql = program.commands.find((c) => c.name() === "sql");
    if (!report || !sql) throw new Error("report or sql missing");
    const lines = Object.fromEntries(helpLines(report).map((l) => [l.option, l.line]));
    expect(lines["--from <day>"]).toMatch(/\(required\)$/);
    expect(lines["--to <day>"]).toMatch(/\(required\)$/);
    expect(sql.helpInformation()).not.toMatch(/statement\.readonly|query_only/);
  });
});
