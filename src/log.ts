// One structured log line per event on stderr: JSON lines when stderr is not a TTY (cron, systemd,
// CI collect them), a short readable line on a terminal. Values that look like secrets are masked.
type LogLevel = "info" | "warn" | "error";
export type LogFields = Record<string, unknown>;

export interface Logger {
  info(event: string, fields?: LogFields): void;
  warn(event: string, fields?: LogFields): void;
  error(event: string, fields?: LogFields): void;
}

export interface LoggerOptions {
  /** Where lines go; defaults to process.stderr. */
  write?: (line: string) => void;
  json?: boolean;
  /** Warnings and errors only (`--quiet`): cron mails and journals then hold only what needs a look. */
  quiet?: boolean;
  /** Strings that must never be printed (API key, signing key): replaced by "***". */
  secrets?: readonly (string | undefined)[];
  now?: () => Date;
}

export function createLogger(options: LoggerOptions = {}): Logger {
  const write = options.write ?? ((line: string) => process.stderr.write(line));
  const json = options.json ?? !process.stderr.isTTY;
  const raw = (options.secrets ?? []).filter((s): s is string => typeof s === "string" && s.length >= 4);
  // A JSON line holds a secret in its escaped form (quotes, backslashes): mask both spellings.
  const secrets = [...new Set(raw.flatMap((secret) => [secret, JSON.stringify(secret).slice(1, -1)]))];
  const now = options.now ?? (() => new Date());
  const mask = (text: string) => secrets.reduce((acc, secret) => acc.split(secret).join("***"), text);

  const emit = (level: LogLevel, event: string, fields: LogFields = {}) => {
    const time = now().toISOString();
    const line = json
      ? JSON.stringify({ time, level, event, ...fields }, errorReplacer)
      : `${time} ${level.padEnd(5)} ${event}${formatFields(fields)}`;
    write(`${mask(line)}\n`);
  };
  return {
    info: (event, fields) => {
      if (!options.quiet) emit("info", event, fields);
    },
    warn: (event, fields) => emit("warn", event, fields),
    error: (event, fields) => emit("error", event, fields),
  };
}

function errorReplacer(_key: string, value: unknown): unknown {
  return value instanceof Error ? { name: value.name, message: value.message } : value;
}

function formatFields(fields: LogFields): string {
  const parts = Object.entries(fields).map(([key, value]) => {
    const text =
      value instanceof Error ? value.message : typeof value === "string" ? value : JSON.stringify(value);
    return `${key}=${text}`;
  });
  return parts.length > 0 ? ` ${parts.join(" ")}` : "";
}

/** `log` with `fields` on every line (a daemon serving several projects names each line's project). */
export function withFields(log: Logger, fields: LogFields): Logger {
  return {
    info: (event, more) => log.info(event, { ...fields, ...more }),
    warn: (event, more) => log.warn(event, { ...fields, ...more }),
    error: (event, more) => log.error(event, { ...fields, ...more }),
  };
}
