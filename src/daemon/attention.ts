// What a daemon cycle leaves for someone to look at, as one warning-level log line's fields.
import type { checkAndDeliver } from "../controls/cycle.ts";
import type { CoverageGap } from "../sync/options.ts";

/**
 * What a cycle leaves for someone to look at: coverage gaps, alerts or SIEM sinks
 * that failed. cycle.end holds the counts at info level, which --quiet (a cron mail) hides; this line is
 * a warning. Sink errors name the sink and the failure, never its URL's token or key (SinkError's rule).
 */
export function needsAttention(
  gaps: readonly CoverageGap[],
  sent: Awaited<ReturnType<typeof checkAndDeliver>> | undefined,
): Record<string, unknown> | null {
  const failedSinks = Object.entries(sent && "sinks" in sent ? sent.sinks : {}).flatMap(([name, count]) =>
    "error" in count ? [{ sink: name, error: count.error }] : [],
  );
  const fields = {
    ...(gaps.length > 0 ? { gaps: gaps.length, gapDays: gaps.slice(0, 10).map((g) => g.day) } : {}),
    ...(sent && sent.failed > 0 ? { alertsFailed: sent.failed } : {}),
    ...(failedSinks.length > 0 ? { sinksFailed: failedSinks } : {}),
  };
  return Object.keys(fields).length > 0 ? fields : null;
}
