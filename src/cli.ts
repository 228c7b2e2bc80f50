// The command-line entry: wires commands and is the only place that turns errors into exit codes.
// 0 ok, 1 failure at run time, 2 bad usage or input.
import { Command, CommanderError } from "commander";
import { registerCommands } from "./commands/register.ts";
import { FlagtrailError } from "./errors.ts";
import { VERSION } from "./version.ts";

export function buildProgram(): Command {
  const program = new Command("flagtrail")
    .description("Sync the console audit log into SQLite and render compliance reports.")
    .version(VERSION)
    .showHelpAfterError("(run with --help for usage)")
    .exitOverride();
  registerCommands(program);
  // Subcommands inherit exitOverride only if set before they are added; set it on all of them.
  for (const sub of program.commands) sub.exitOverride();
  return program;
}

export async function main(argv: readonly string[]): Promise<number> {
  try {
    await buildProgram().parseAsync([...argv]);
    return 0;
  } catch (error) {
    return exitCodeFor(error);
  }
}

/** What bin/flagtrail.js runs: the whole process, from its arguments to its exit code. */
export async function runProcess(argv: readonly string[]): Promise<number> {
  return main(argv);
}

function exitCodeFor(error: unknown): number {
  if (error instanceof CommanderError) {
    // Commander already printed help or the usage problem.
    return error.exitCode === 0 ? 0 : 2;
  }
  if (error instanceof FlagtrailError) {
    process.stderr.write(`flagtrail: ${error.message}\n`);
    return error.exitCode;
  }
  const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
  process.stderr.write(`flagtrail: unexpected error: ${message}\n`);
  return 1;
}
