// The CLI entry: every command answers --help through the real binary, usage errors exit 2.
import { describe, expect, it } from "vitest";
import { buildProgram } from "../src/cli.ts";
import { VERSION } from "../src/version.ts";
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
      const result = await runCli([name, "--help"]);
      expect(result.code).toBe(0);
      expect(result.stdout).toContain(`Usage: flagtrail ${name}`);
      for (const flag of flags) expect(result.stdout).toContain(flag);
    },
  );

  it("exits 2 on an unknown command or option, with the problem on stderr", async () => {
    const unknownCommand = await runCli(["frobnicate"]);
    expect(unknownCommand.code).toBe(2);
    expect(unknownCommand.stderr).toContain("unknown command 'frobnicate'");
    const unknownOption = await runCli(["status", "--colour"]);
    expect(unknownOption.code).toBe(2);
    expect(unknownOption.stderr).toContain("unknown option '--colour'");
  });
});
