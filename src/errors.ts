// Typed errors. Library code throws these; only src/cli.ts turns them into exit codes and text.

/** Something went wrong at run time: network, auth, integrity, a held lock. Exit code 1. */
export class FlagtrailError extends Error {
  readonly exitCode: 1 | 2 = 1;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** The user asked for something malformed: bad option, bad date, missing key. Exit code 2. */
export class UsageError extends FlagtrailError {
  override readonly exitCode = 2 as const;
}

/** The settings an engine names when it refuses one; each command knows the flag that gives which. */
export type Setting =
  | "start day"
  | "end day"
  | "period"
  | "time zone"
  | "schedule"
  | "query parameter"
  | "demo world"
  /** Permission for a start day before any console audit log (a guard against typos). */
  | "earlier start"
  /** Whether the entity history is read at all. */
  | "entity history"
  /** Reading the entity history alone, without the audit log. */
  | "entities only"
  /** The config file (of projects, controls and sinks). */
  | "config file"
  /** A sync's records per page, requests in flight, and days re-read before the checkpoint. */
  | "page size"
  | "concurrency"
  | "lookback";

/**
 * A setting's value is refused. The message names the setting, never a command-line flag: the daemon and
 * the demo pass settings no flag gave. A command re-words it with its flag (src/commands/options.ts).
 */
export class SettingError extends UsageError {
  /** The setting refused: the first of `settings`. */
  readonly setting: Setting;
  /** Every setting the refusal is about: one, or the ones that conflict. */
  readonly settings: readonly Setting[];
  /**
   * The setting that would accept the value, or give the one missing, when one would (the message says
   * how in words, and ends there). A missing setting is its own remedy: named once, at the end.
   */
  readonly remedy: Setting | undefined;
  constructor(setting: Setting | readonly [Setting, ...Setting[]], message: string, remedy?: Setting) {
    super(message);
    this.settings = typeof setting === "string" ? [setting] : setting;
    this.setting = this.settings[0]!;
    this.remedy = remedy;
  }
}

/** SQL that does not compile or run as given (bad syntax, a missing parameter): the user's input at fault. */
export function sqlUsageError(message: string): UsageError {
  return new UsageError(`SQL error: ${message}`);
}

/** The console API answered with an error status, or never answered after all retries. */
export class ApiError extends FlagtrailError {
  constructor(
    message: string,
    readonly status: number | undefined,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** 401: the key is missing, wrong or not a console key. */
export class AuthError extends ApiError {}

/** Another process holds the database (a sync or a daemon lease). */
export class LockedError extends FlagtrailError {}

/** The database stayed write-locked past the busy timeout: in use, not held by another holder of a lease. */
export class DatabaseBusyError extends LockedError {}

/**
 * The store or a report does not match its recorded hashes. `breakKey` names the kind of break and where
 * it is (a record's seq, a row's id, a table), never a count or a head that later writes move: the
 * integrity control keys its finding on it, so one break stays one finding, alerted once.
 */
export class IntegrityError extends FlagtrailError {
  constructor(
    message: string,
    readonly breakKey: string,
  ) {
    super(message);
  }
}

/**
 * An integrity finding's clause as the CLI prints its sentences: a capital first, a full stop last. The
 * clause stays as it is where it is part of a sentence (the integrity control's "verify fails: …").
 */
export const sentenceOf = (clause: string): string =>
  // A first word that is a name (a file's, a path) keeps its case: only a plain word is capitalized.
  `${clause.replace(/^[a-z]+(?= )/, (word) => word.charAt(0).toUpperCase() + word.slice(1))}${/[.?!]$/.test(clause) ? "" : "."}`;

/** The run was asked to stop (SIGINT/SIGTERM) and stopped cleanly. */
export class AbortedError extends FlagtrailError {}

/** The disk (or the user's quota) is full: says so and names the file or directory being written. */
export class DiskFullError extends FlagtrailError {
  constructor(
    readonly path: string,
    options?: { cause?: unknown },
  ) {
    super(`No space left on device writing ${path}; free some space and run the command again.`, options);
  }
}

const DISK_FULL_CODES = new Set(["ENOSPC", "EDQUOT", "SQLITE_FULL"]);

/**
 * `error` as a DiskFullError naming `path` when it, or an error it wraps (drizzle wraps the driver's),
 * is a full disk: ENOSPC/EDQUOT from a file write, SQLITE_FULL from SQLite. Otherwise undefined.
 */
export function asDiskFull(error: unknown, path: string): DiskFullError | undefined {
  for (let e = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if (e instanceof DiskFullError) return e;
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string" && DISK_FULL_CODES.has(code))
      return new DiskFullError(path, { cause: error });
  }
  return undefined;
}

/** One sentence for the user from a filesystem or SQLite error ("SQLITE_NOTADB: file is not a database"). */
export function describeOpenError(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    const message = error.message.replace(/\.$/, "");
    return typeof code === "string" && !message.startsWith(code) ? `${code}: ${message}` : message;
  }
  return String(error);
}

/** A user's query (`flagtrail sql`) worked its whole time limit and was stopped: a run-time failure, not bad input. */
export class QueryTimeoutError extends FlagtrailError {
  constructor(limitMs: number) {
    super(`The query was stopped after ${limitMs / 1000} s of work, its time limit; nothing was changed.`);
  }
}

/** A report would replace an earlier report's file of the same period whose content differs. */
export class ReportExistsError extends FlagtrailError {
  constructor(readonly path: string) {
    super(
      `${path} already exists with different content (an earlier report of this period); ` +
        "move it away, or force the replacement, which the manifest then records.",
    );
  }
}

/** `flagtrail check` found unwaived findings at or above --fail-on. Exit code 1. */
export class FindingsError extends FlagtrailError {}

/** `check --notify` left alerts waiting in the outbox: the sentence names each sink and why. Exit code 1. */
export class UndeliveredAlertsError extends FlagtrailError {}

/** `sink "splunk"`: how every message names a sink. */
export const sinkLabel = (name: string): string => `sink ${JSON.stringify(name)}`;

/**
 * An outbox row's last_error as the reason alone. Rows that failed before the reason was kept apart
 * (SinkError.reason) hold the whole sentence, `sink "x" could not …`, `sink "x": the …` or `sink x: the …`;
 * until retried they would name the sink twice where it is named already, so their prefix is read away.
 */
export function storedReason(sink: string, lastError: string): string {
  for (const prefix of [`${sinkLabel(sink)} `, `${sinkLabel(sink)}: `, `sink ${sink}: `]) {
    if (lastError.startsWith(prefix)) return lastError.slice(prefix.length).replace(/\.$/, "");
  }
  return lastError;
}

/**
 * A sink refused or could not take events or an alert; the sentence names the sink, never its secret.
 * The reason is kept apart for what names the sink itself (the outbox row, `check --notify`'s sentence).
 */
export class SinkError extends FlagtrailError {
  constructor(
    readonly sink: string,
    /** Without the sink's name or a full stop: `could not be reached (ECONNREFUSED)`. */
    readonly reason: string,
    /** Worth trying again later (network, 5xx, back-pressure), unlike a refused token. */
    readonly retryable: boolean,
    /** How the sentence reads: `sink "x" could not …` (a verb phrase) or `sink "x": the …` (a clause). */
    form: "verb" | "clause" = "verb",
    /** The receiver refused the request as too large (HTTP 413): a smaller batch may go. */
    readonly tooLarge = false,
    /**
     * The receiver refused these events themselves (HTTP 400, 413, 422), not the sink (its credentials, its
     * URL, its secret): other events, a finding, may still go.
     */
    readonly eventsRefused = false,
  ) {
    super(`${sinkLabel(sink)}${form === "verb" ? " " : ": "}${reason}.`);
  }
}
