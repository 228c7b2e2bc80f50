// Which events' metrics a sync reads: the ones named, then every event read before and every event the
// stored metrics' lineage names (lineage is followed), from the rows the store reads.
import { metricEventSources, type Store } from "../store/syncStore.ts";

/** The text members of one metric's lineage.events, as SQLite's json_each gives them: an array's
 * elements, an object's values, a lone string itself. */
function lineageEvents(raw: string): string[] {
  const events = (JSON.parse(raw) as { lineage?: { events?: unknown } } | null)?.lineage?.events;
  const members = Array.isArray(events)
    ? events
    : events !== null && typeof events === "object"
      ? Object.values(events)
      : [events];
  return members.filter((member): member is string => typeof member === "string");
}

/** Events to read metrics of: `named`, then the known ones in byte order, each once. */
export async function eventsDueForMetrics(store: Store, named: readonly string[]): Promise<string[]> {
  const { fetched, lineageRaw } = await metricEventSources(store);
  const known = new Set([...fetched, ...lineageRaw.flatMap(lineageEvents)]);
  const sorted = [...known].sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y)));
  return [...new Set([...named, ...sorted])];
}
