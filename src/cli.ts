// The command-line entry: wires commands and is the only place that turns errors into exit codes.
// 0 ok, 1 failure at run time, 2 bad usage or input.
import { Command, CommanderError } from "commander";
import { registerCommands } from "./commands/register.ts";
import { FlagtrailError, IntegrityError, sentenceOf } from "./errors.ts";
import { VERSION } from "./version.ts";

export function buildProgram(): Command {
  const program = new Command("flagtrail")
    .description("Sync the console audit log into SQLite or PostgreSQL and render compliance reports.")
    .version(VERSION)
    // Commander's usage errors ("error: …", a suggestion on a second line) as one sentence like the rest;
    // set before the commands are added, which copy it.
    .configureOutput({
      outputError: (message, write) =>
        write(
          // An "option" holding spaces is a text that starts with "-", such as a query's leading comment.
          /^error: unknown option '-[^']*\s/.test(message)
            ? 'flagtrail: an argument that starts with "-" reads as an option; put it after --, as in flagtrail sql -- "-- why … SELECT …".\n'
            : `flagtrail: ${message
                .replace(/^error: /, "")
                .trim()
                .replace(/\s*\n\s*/g, " ")
                // "… Allowed choices are a, b, c." ends in a stop of its own: not ".;".
                .replace(/\.$/, "")}; run with --help for usage.\n`,
        ),
    })
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

/**
 * What bin/flagtrail.js runs: the whole process, from its arguments to its exit code. `signalled`: a
 * signal the bin held while this module loaded; no command has started, so it ends the run at once.
 */
export async function runProcess(argv: readonly string[], signalled?: NodeJS.Signals): Promise<number> {
  installProcessHandlers();
  if (signalled !== undefined) return stoppedBy(signalled);
  return main(argv);
}

/** A signal no command handles: exit 1 with one sentence instead of the shell's 130/143. */
function stoppedBy(signal: NodeJS.Signals): number {
  process.stderr.write(`flagtrail: stopped by ${signal}; anything already stored is kept.\n`);
  return 1;
}

/**
 * Process-wide outcomes no command owns, installed before any command module loads:
 * - a reader that closed stdout (`flagtrail sql … | head -2`) ends the command at once, quietly, with 0
 *   (what a pipeline shows for `cat` killed by SIGPIPE, so `set -o pipefail` scripts do not fail on it),
 *   or with the exit code the command had already decided;
 * - SIGINT/SIGTERM that no command handles (while modules load, in commands without a clean stop, or a
 *   second signal during one) exit 1 with one sentence instead of the shell's 130/143. sync, daemon and
 *   simulate install their own handlers for a clean stop; this one is first in line and steps aside then.
 */
function installProcessHandlers(): void {
  process.stdout.on("error", (error) => {
    // `check | head` must not pass a failing control: a verdict already reached stands.
    if (isClosedStdout(error)) process.exit(process.exitCode ?? 0);
    process.stderr.write(`flagtrail: cannot write to stdout: ${error.message}\n`);
    process.exit(1);
  });
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.prependListener(signal, () => {
      if (process.listenerCount(signal) > 1) return;
      process.exit(stoppedBy(signal));
    });
  }
}

/**
 * The reader went away (`| head`): EPIPE on a write, or ECONNRESET when node's stdout is a socket pair
 * (seen in CI under spawn). Only stdout and stderr are written raw here: network errors arrive typed.
 */
function isClosedStdout(error: unknown): boolean {
  const { code, syscall } = (error ?? {}) as NodeJS.ErrnoException;
  return (code === "EPIPE" || code === "ECONNRESET") && syscall === "write";
}

/** The exit code for how a command ended, with its one sentence on stderr. */
export function exitCodeFor(error: unknown): number {
  if (error instanceof CommanderError) {
    // Commander already printed help or the usage problem.
    return error.exitCode === 0 ? 0 : 2;
  }
  // A write that failed because stdout was closed reaches here too (awaited writes reject); stdout is
  // destroyed by then. Another socket's reset (a database's) is a failure, not a reader gone.
  if (isClosedStdout(error) && process.stdout.destroyed) return 0;
  if (error instanceof FlagtrailError) {
    process.stderr.write(
      `flagtrail: ${error instanceof IntegrityError ? sentenceOf(error.message) : error.message}\n`,
    );
    return error.exitCode;
  }
  // A bug or an error we did not foresee: still one sentence; the stack only when asked for.
  const message = error instanceof Error ? error.message.split("\n")[0] : String(error);
  const stack = process.env.FLAGTRAIL_DEBUG === "1" && error instanceof Error ? `\n${error.stack}` : "";
  process.stderr.write(
    `flagtrail: unexpected error: ${message} (FLAGTRAIL_DEBUG=1 shows where it happened).${stack}\n`,
  );
  return 1;
}
