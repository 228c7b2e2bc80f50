// The shared parts of every command's registration: the help style, lazy actions, and the options several
// commands take (--db, --db-file, --config).
//
// One help style for every option: what it does, then one parenthesis whose parts come in this order,
// separated by "; ": `required`, `one of: a, b`, `default: X`, `env: NAME` (describeOption below;
// test/commands/help.test.ts holds every command to it). Every command ends its help with examples.
import { type Command, Option } from "commander";

/** An action that loads its module on first use; commander's arguments are passed through. */
export function lazy<A extends unknown[]>(load: () => Promise<{ action: (...args: A) => unknown }>) {
  return async (...args: A): Promise<void> => {
    const module = await load();
    await module.action(...args);
  };
}

export function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

/**
 * A default or a variable the command itself applies (commander does not: the order of flags, variables
 * and files is flagtrail's), shown in help like the defaults commander applies.
 */
interface HelpMeta {
  default?: string;
  env?: string;
}
const helpMeta = new WeakMap<Option, HelpMeta>();

export function opt(flags: string, text: string, meta: HelpMeta = {}): Option {
  const option = new Option(flags, text);
  helpMeta.set(option, meta);
  return option;
}

/** The help line of an option: its text, then `(required; one of: …; default: …; env: …)`. */
export function describeOption(option: Option): string {
  const meta = helpMeta.get(option) ?? {};
  const parts: string[] = [];
  if (option.mandatory) parts.push("required");
  if (option.argChoices) parts.push(`one of: ${option.argChoices.join(", ")}`);
  const fallback =
    meta.default ??
    option.defaultValueDescription ??
    (typeof option.defaultValue === "string" ? option.defaultValue : undefined);
  if (fallback !== undefined) parts.push(`default: ${fallback}`);
  const env = meta.env ?? option.envVar;
  if (env !== undefined) parts.push(`env: ${env}`);
  return parts.length > 0 ? `${option.description} (${parts.join("; ")})` : option.description;
}

/**
 * The variables a command reads that no option stands for (the signing keys: never on a command line),
 * listed before the examples so that `--help` shows them at all. `lines` are [name, text] pairs.
 */
export function environment(command: Command, lines: readonly (readonly [string, string])[]): Command {
  const text = lines.map(([name, what]) => `  ${name}\n${wrap(what, 6, 80)}`).join("\n");
  return command.addHelpText("after", `\nEnvironment:\n${text}`);
}

/** Words into lines of at most `width` columns, each indented by `indent`, as commander wraps options. */
function wrap(text: string, indent: number, width: number): string {
  const lines: string[] = [];
  for (const word of text.split(" ")) {
    const last = lines.at(-1);
    if (last !== undefined && last.length + 1 + word.length <= width - indent)
      lines[lines.length - 1] = `${last} ${word}`;
    else lines.push(word);
  }
  return lines.map((line) => `${" ".repeat(indent)}${line}`).join("\n");
}

/** The signing keys as `sync` and `daemon` use them (docs/operations.md, Rotating the signing key). */
export const SIGNING_KEY_ENV = [
  [
    "FLAGTRAIL_SIGNING_KEY",
    "HMAC key that signs the store's chain head; a head signed with another key is refused (exit 1)",
  ],
  [
    "FLAGTRAIL_SIGNING_KEY_PREVIOUS",
    "the key before a rotation, for the first sync with the new one, which then signs the head; " +
      "remove it after that sync (docs/operations.md, Rotating the signing key)",
  ],
] as const;

export function examples(command: Command, lines: readonly string[]): Command {
  return command.addHelpText("after", `\nExamples:\n${lines.map((l) => `  $ ${l}`).join("\n")}\n`);
}

/** Where a password goes instead of --db, whose value other users of the machine see (ps). */
export const dbOption = () =>
  opt(
    "--db <path|url>",
    "SQLite file or postgres:// URL of the store; a password in a URL here is visible to other users " +
      "(ps): prefer FLAGTRAIL_DB, PGPASSWORD or --db-file",
    { default: "./flagtrail.db", env: "FLAGTRAIL_DB" },
  );

export const dbFileOption = () =>
  opt("--db-file <path>", "file holding the --db value, trimmed: keeps a URL's password out of ps");

export const configOption = () =>
  opt(
    "--config <file>",
    "projects config; it replaces --base-url, --api-key-file, --api-key and --auth-header",
    {
      default: "./flagtrail.config.json when it exists",
      env: "FLAGTRAIL_CONFIG",
    },
  );
