// The entity backlog (src/store/entityBacklog.ts) in words, one phrase per kind: for the report's
// completeness section and for `flagtrail status`.
import type { EntityBacklogRow } from "../store/entityBacklog.ts";

const KIND_WORDS: Record<string, { read: string; what: string }> = {
  config_versions: { read: "config versions", what: "edited configs" },
  layer_experiments: { read: "layer experiments", what: "layers" },
  event_metrics: { read: "event metrics", what: "events" },
};

/** "config versions read for 57 of 99 edited configs; 42 pending": one phrase per kind, for status and the report. */
export function entityBacklogPhrases(rows: readonly EntityBacklogRow[]): string[] {
  return rows.map((row) => {
    const words = KIND_WORDS[row.kind] ?? { read: row.kind, what: "entities" };
    const pending = row.pending > 0 ? `; ${row.pending} pending` : "";
    return `${words.read} read for ${row.entities - row.pending} of ${row.entities} ${words.what}${pending}`;
  });
}
