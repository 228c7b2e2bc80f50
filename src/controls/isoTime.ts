// The one format of times in check's output (table, JSON, JUnit), its alerts and the OCSF findings.

/** `2026-11-20T03:04:05.000+00:00`: ISO 8601 with its offset spelt out. */
export function isoWithOffset(ms: number): string {
  // A check's findings share their first-seen time: formatted once, not once per finding (issue 23).
  if (ms !== lastIso.ms) lastIso = { ms, text: new Date(ms).toISOString().replace("Z", "+00:00") };
  return lastIso.text;
}
let lastIso = { ms: Number.NaN, text: "" };
