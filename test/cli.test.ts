// The CLI entry: every command answers --help, usage errors exit 2. The program's own --help, --version
// and the usage errors through the real binary; each command's --help through the CLI run in this process
// (test/helpers/inProcessCli.ts), which prints what the binary prints (checked here too).
import { describe, expect, it } from "vitest";
import { buildProgram } from "../src/cli.ts";
import { VERSION } from "../src/version.ts";
import { runCliInProcess } from "./helpers/inProcessCli.ts";
import { runCli } from "./helpers/runCli.ts";

const commands = buildProgram().commands.map((c) => ({
  name: c.name(),
  flags: c.options.map((o) => o.long).filter((f): f is string => f !== undefined),
}));

describe("flagtrail CLI", () => {
  it("lists every command in --help and prints its version", async () => {
    expect(commands.map((c) => c.name).sort()).toEqual(
      [
        "action-types",
        "check",
        "daemon",
        "demo",
        "doctor",
        "export",
        "report",
        "simulate",
        "sql",
        "status",
        "sync",
        "unwaive",
        "verify",
        "waive",
      ].sort(),
    );
    const help = await runCli(["--help"]);
    expect(help.code).toBe(0);
    for (const { name } of commands) expect(help.stdout).toMatch(new RegExp(`^  ${name}\\b`, "m"));
    const version = await runCli(["--version"]);
    expect(version.stdout.trim()).toBe(VERSION);
  });

  it.each(commands)(
    "flagtrail $name --help exits 0 and documents each of its options",
    async ({ name, flags }) => {
      const result = await runCliInProcess([name, "--help"]);
      expect(result.code).toBe(0);
      expect(result.stdout).toContain(`Usage: flagtrail ${name}`);
      for (const flag of flags) expect(result.stdout).toContain(flag);
    },
  );

  it("exits 2 on an unknown command or option, with the problem on stderr", async () => {
    const unknownCommand = await runCli(["frobnicate"]);
    expect(unknownCommand.code).toBe(2);
    // One sentence, as every other error: no "error:" line and a second line of advice.
    expect(unknownCommand.stderr).toBe(
      "flagtrail: unknown command 'frobnicate'; run with --help for usage.\n",
    );
    // In this process: the last test shows it prints and exits as the spawned binary does.
    const unknownOption = await runCliInProcess(["status", "--colour"]);
    expect(unknownOption.code).toBe(2);
    expect(unknownOption.stderr).toBe("flagtrail: unknown option '--colour'; run with --help for usage.\n");
    // Commander's choices message ends in a full stop of its own: one sentence, no ".;".
    const choice = await runCliInProcess(["action-types", "--category", "nope"]);
    expect(choice.code).toBe(2);
    expect(choice.stderr).toBe(
      "flagtrail: option '--category <category>' argument 'nope' is invalid. Allowed choices are experiment_state_change, config_edit, other; run with --help for usage.\n",
    );
    // An option's value outside its choices or range: the CLI's words, not zod's ("Invalid option: …").
    const severity = await runCliInProcess(["check", "--fail-on", "critical", "--db", "/nonexistent/x.db"]);
    expect(severity.code).toBe(2);
    expect(severity.stderr).toBe('flagtrail: --fail-on: expected low, medium or high, got "critical"\n');
    // report's and sql's --format say the same: the choices and the value given (new-user trial h68).
    const pdf = await runCliInProcess([
      "report",
      "--from",
      "2024-01-01",
      "--to",
      "2024-01-02",
      "--format",
      "pdf",
    ]);
    expect(pdf.code).toBe(2);
    expect(pdf.stderr).toBe('flagtrail: --format: expected csv, md or html, got "pdf"\n');
    const xml = await runCliInProcess(["sql", "--format", "xml", "SELECT 1", "--db", "/nonexistent/x.db"]);
    expect(xml.code).toBe(2);
    expect(xml.stderr).toBe('flagtrail: --format: expected table, csv, json or nl, got "xml"\n');
    const batch = await runCliInProcess(["export", "--batch-size", "0", "--db", "/nonexistent/x.db"]);
    expect(batch.code).toBe(2);
    expect(batch.stderr).toBe("flagtrail: --batch-size: must be at least 1\n");
    // A query pasted with its leading comment (docs/sql.md writes them so) is not an option: say how.
    const comment = await runCliInProcess(["sql", "-- who changed what\nSELECT 1"]);
    expect(comment.code).toBe(2);
    expect(comment.stderr).toBe(
      'flagtrail: an argument that starts with "-" reads as an option; put it after --, as in flagtrail sql -- "-- why … SELECT …".\n',
    );
  });

  it("run in this process, prints and exits as the binary does, and leaves env and stdout as they were", async () => {
    const env = { ...process.env };
    const { write } = process.stdout;
    for (const args of [
      ["sync", "--help"],
      ["status", "--colour"],
      ["verify", "--db", "/nonexistent/x.db"],
    ]) {
      const [spawned, inProcess] = [await runCli(args), await runCliInProcess(args)];
      expect(inProcess, args.join(" ")).toEqual(spawned);
    }
    expect(process.env).toEqual(env);
    expect(process.stdout.write).toBe(write);
  });
});
