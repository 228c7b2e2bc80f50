// A instant's weekday and HH:MM in an IANA zone, for change windows. One formatter per zone.
import type { WEEKDAYS } from "./config.ts";

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterOf(zone: string): Intl.DateTimeFormat {
  let f = formatters.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat("en-US", {
      timeZone: zone,
      weekday: "short",
      hour: "2-digit",
      minute: "2-digit",
      hourCycle: "h23",
    });
    formatters.set(zone, f);
  }
  return f;
}

export function localTime(
  epochMs: number,
  zone: string,
): { weekday: (typeof WEEKDAYS)[number]; hhmm: string } {
  const parts = formatterOf(zone).formatToParts(epochMs);
  const part = (type: string) => parts.find((p) => p.type === type)?.value ?? "";
  const weekday = part("weekday").toLowerCase().slice(0, 3) as (typeof WEEKDAYS)[number];
  return { weekday, hhmm: `${part("hour")}:${part("minute")}` };
}
