// The event webhook and the metrics derived from ingested events. Events themselves are not kept
// (a long demo would grow without bound): per event name only what the metrics need.
import type { ServiceEvent } from "../events/serviceEvent.ts";
import { serviceEventSchema } from "../events/serviceEvent.ts";
import type { SimRequest, SimResponse, SimRoute } from "../types.ts";
import { listResponse, parsePageQuery } from "./pagination.ts";
import { badRequest, fieldErrors } from "./responses.ts";

const METRICS_LISTED_MESSAGE = "Metrics listed successfully.";

/** The auto-generated metrics of every ingested event, in this order. */
const EVENT_METRIC_TYPES = ["event_count", "event_dau", "event_user"] as const;

const DESCRIPTIONS: Record<(typeof EVENT_METRIC_TYPES)[number], string> = {
  event_count: "Total number of times the event was logged.",
  event_dau: "Number of distinct units that logged the event each day.",
  event_user: "Number of distinct units that logged the event.",
};

interface EventStats {
  /** Simulator clock at the first ingestion: the derived metrics' createdTime. */
  firstIngestedAt: number;
  count: number;
}

export class EventStore {
  private readonly stats = new Map<string, EventStats>();

  constructor(private readonly now: () => number) {}

  ingest(event: ServiceEvent): void {
    const stats = this.stats.get(event.event);
    if (stats === undefined) this.stats.set(event.event, { firstIngestedAt: this.now(), count: 1 });
    else stats.count += 1;
  }

  /** How many events named `eventName` were ingested. */
  count(eventName: string): number {
    return this.stats.get(eventName)?.count ?? 0;
  }

  /** The Metric records derived from `eventName`; none for an event never ingested. */
  metrics(eventName: string): Record<string, unknown>[] {
    const stats = this.stats.get(eventName);
    if (stats === undefined) return [];
    return EVENT_METRIC_TYPES.map((type) => ({
      id: `${eventName}::${type}`,
      name: eventName,
      type,
      directionality: "increase",
      description: DESCRIPTIONS[type],
      isPermanent: false,
      isReadOnly: false,
      isHidden: false,
      isVerified: false,
      tags: [],
      createdTime: stats.firstIngestedAt,
      lineage: { events: [eventName], metrics: [] },
      team: null,
    }));
  }

  routes(): SimRoute[] {
    return [
      {
        method: "POST",
        pattern: /^\/v1\/webhooks\/event_webhook\/?$/,
        auth: "server",
        handle: (request) => this.webhook(request.body),
      },
      {
        method: "GET",
        pattern: /^\/console\/v1\/events\/([^/]+)\/metrics\/?$/,
        auth: "console",
        handle: (request, [eventName]) => this.listMetrics(request, eventName ?? ""),
      },
    ];
  }

  /** One event per request (spec). The response is not specified; we answer 202 {success: true}. */
  private webhook(body: unknown): SimResponse {
    if (typeof body !== "object" || body === null || Array.isArray(body)) {
      return badRequest([{ property: "body", message: "body must be one event object" }]);
    }
    const parsed = serviceEventSchema.safeParse(body);
    if (!parsed.success) return badRequest(fieldErrors(parsed.error));
    this.ingest(parsed.data);
    return { status: 202, body: { success: true } };
  }

  /** An event never ingested has no derived metrics: an empty list, not a 404. */
  private listMetrics(request: SimRequest, eventName: string): SimResponse {
    const page = parsePageQuery(request.query);
    if (Array.isArray(page)) return badRequest(page);
    const all = this.metrics(eventName);
    const items = all.slice(page.offset, page.offset + page.limit);
    return listResponse(request, page, all.length, METRICS_LISTED_MESSAGE, items);
  }
}
