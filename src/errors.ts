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

/** The store or a report does not match its recorded hashes. */
export class IntegrityError extends FlagtrailError {}

/** The run was asked to stop (SIGINT/SIGTERM) and stopped cleanly. */
export class AbortedError extends FlagtrailError {}

/** `flagtrail check` found unwaived findings at or above --fail-on. Exit code 1. */
export class FindingsError extends FlagtrailError {}
