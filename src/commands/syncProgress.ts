// `flagtrail sync`'s progress on stderr: a bar on a terminal, timestamped lines elsewhere (cron, CI),
// a line per retry. The daemon logs with the same interval.
import type { RetryEvent } from "../api/clientOptions.ts";
import type { SyncEvent } from "../sync/runSync.ts";

/** Seconds between progress lines when stderr is not a terminal (cron logs, CI, the daemon's log). */
export const LOG_PROGRESS_SECONDS = Number(process.env.FLAGTRAIL_PROGRESS_SECONDS ?? 10);

type ProgressEvent = Extract<SyncEvent, { type: "progress" }>;

/** Records per second since `startedAt`, and the time left for the phase at its pace so far. */
export function rateAndEta(event: ProgressEvent, startedAt: number, now: number, phaseStartedAt = startedAt) {
  const seconds = Math.max(0.001, (now - startedAt) / 1000);
  const rate = Math.round(event.fetched / seconds);
  const phaseSeconds = (now - phaseStartedAt) / 1000;
  const eta =
    event.done > 0 && event.done < event.total
      ? Math.round((phaseSeconds * (event.total - event.done)) / event.done)
      : undefined;
  return { rate, eta };
}

function formatSeconds(seconds: number): string {
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  return minutes < 60
    ? `${minutes} min ${seconds % 60} s`
    : `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

/**
 * Progress on stderr: a bar redrawn in place on a terminal (with the rate and the time left); elsewhere
 * one timestamped line at most every FLAGTRAIL_PROGRESS_SECONDS, so a cron log shows where a long run is
 * and when. Every retry is a line of its own.
 */
export function progressReporter(quiet: boolean, label?: string) {
  // Several projects at once share stderr: each writes labelled lines, none redraws a bar.
  const tty = process.stderr.isTTY === true && label === undefined;
  const prefix = label === undefined ? "" : `${label}: `;
  const startedAt = Date.now();
  const phaseStart = new Map<string, number>();
  let drawn = false;
  let last: ProgressEvent | undefined;
  let lastLogged: typeof last;
  const finish = () => {
    if (drawn) process.stderr.write("\n");
    drawn = false;
  };
  const logLine = () => {
    if (!last || last === lastLogged) return;
    lastLogged = last;
    process.stderr.write(
      `${new Date().toISOString()} ${prefix}progress: ${last.phase} ${last.done}/${last.total}, fetched ${last.fetched}, new ${last.inserted}\n`,
    );
  };
  const timer =
    !tty && !quiet && LOG_PROGRESS_SECONDS > 0
      ? setInterval(logLine, LOG_PROGRESS_SECONDS * 1000)
      : undefined;
  timer?.unref();
  const drawBar = (event: ProgressEvent) => {
    const width = 24;
    const filled = event.total > 0 ? Math.round((event.done / event.total) * width) : width;
    const bar = `${"#".repeat(filled)}${"-".repeat(width - filled)}`;
    const now = Date.now();
    const { rate, eta } = rateAndEta(event, startedAt, now, phaseStart.get(event.phase));
    const left = eta === undefined ? "" : `  ~${formatSeconds(eta)} left`;
    process.stderr.write(
      `\r${event.phase} [${bar}] ${event.done}/${event.total}  fetched ${event.fetched}  new ${event.inserted}  ${rate}/s${left}\u001b[K`,
    );
    drawn = true;
  };
  const onEvent = (event: SyncEvent) => {
    if (quiet) return;
    if (event.type === "progress") {
      if (!phaseStart.has(event.phase)) phaseStart.set(event.phase, Date.now());
      last = event;
      if (tty) drawBar(event);
      return;
    }
    // Window and entity steps show in the bar and the periodic lines; the daemon logs each.
    if (event.type === "window" || event.type === "entities") return;
    finish();
    // Warnings are counted in the summary; only notices are worth a line each.
    if (event.type === "notice") process.stderr.write(`${prefix}${event.message}\n`);
  };
  const onRetry = (event: RetryEvent) => {
    if (quiet) return;
    finish();
    process.stderr.write(
      `${tty ? "" : `${new Date().toISOString()} `}${prefix}retry: GET ${event.requestPath}: ${event.reason}; attempt ${event.attempt + 1} in ${(event.delayMs / 1000).toFixed(1)} s\n`,
    );
  };
  const stop = () => {
    if (timer) clearInterval(timer);
    finish();
  };
  return { onEvent, onRetry, finish: stop };
}
