import { describe, expect, it } from "vitest";
import { UsageError } from "../../src/errors.ts";
import { convertAnalyticsEvent, EventConversionError } from "../../src/simulator/events/analyticsEvent.ts";
import type { ServiceEvent } from "../../src/simulator/events/serviceEvent.ts";
import { serviceEventSchema } from "../../src/simulator/events/serviceEvent.ts";

// The spec's five rules: event → event; properties.time (s) → timestamp (ms); distinct_id or
// user_id → user.userID; device_id → user.stableID; every other property → metadata.
const cases: Array<[string, unknown, ServiceEvent]> = [
  [
    "all five rules at once",
    {
      event: "Signed Up",
      properties: {
        time: 1_700_000_000,
        distinct_id: "u-1",
        device_id: "d-1",
        plan: "pro",
        $browser: "Firefox",
      },
    },
    {
      event: "Signed Up",
      user: { userID: "u-1", stableID: "d-1" },
      timestamp: 1_700_000_000_000,
      metadata: { plan: "pro", $browser: "Firefox" },
    },
  ],
  [
    "user_id when there is no distinct_id",
    { event: "e", properties: { time: 1, user_id: "u-2" } },
    { event: "e", user: { userID: "u-2" }, timestamp: 1000, metadata: {} },
  ],
  [
    "device only → stableID, no userID",
    { event: "e", properties: { time: 2, device_id: "d-9" } },
    { event: "e", user: { stableID: "d-9" }, timestamp: 2000, metadata: {} },
  ],
  [
    "distinct_id wins; a different user_id is kept in metadata",
    { event: "e", properties: { time: 3, distinct_id: "anon-7", user_id: "u-7" } },
    { event: "e", user: { userID: "anon-7" }, timestamp: 3000, metadata: { user_id: "u-7" } },
  ],
  [
    "equal distinct_id and user_id collapse into userID",
    { event: "e", properties: { time: 3, distinct_id: "u-7", user_id: "u-7" } },
    { event: "e", user: { userID: "u-7" }, timestamp: 3000, metadata: {} },
  ],
  [
    "numeric ids become strings",
    { event: "e", properties: { time: 4, distinct_id: 12345, device_id: 6 } },
    { event: "e", user: { userID: "12345", stableID: "6" }, timestamp: 4000, metadata: {} },
  ],
  [
    "null or empty ids count as absent",
    { event: "e", properties: { time: 5, distinct_id: null, user_id: "", device_id: "d" } },
    { event: "e", user: { stableID: "d" }, timestamp: 5000, metadata: {} },
  ],
  [
    "fractional seconds round to whole milliseconds",
    { event: "e", properties: { time: 1_700_000_000.1234, distinct_id: "u" } },
    { event: "e", user: { userID: "u" }, timestamp: 1_700_000_000_123, metadata: {} },
  ],
  [
    "nested and typed metadata values are kept as they are",
    {
      event: "e",
      properties: { time: 0, distinct_id: "u", cart: { items: [1, 2] }, paid: true, total: 9.5, note: null },
    },
    {
      event: "e",
      user: { userID: "u" },
      timestamp: 0,
      metadata: { cart: { items: [1, 2] }, paid: true, total: 9.5, note: null },
    },
  ],
  [
    "top-level fields other than event and properties are not part of the mapping",
    { event: "e", properties: { time: 6, distinct_id: "u" }, extra: "ignored" },
    { event: "e", user: { userID: "u" }, timestamp: 6000, metadata: {} },
  ],
];

describe("convertAnalyticsEvent", () => {
  it.each(cases)("%s", (_label, input, expected) => {
    const converted = convertAnalyticsEvent(input);
    expect(converted).toEqual(expected);
    // Whatever the converter returns is a valid webhook event.
    expect(serviceEventSchema.safeParse(converted).success).toBe(true);
  });

  const invalid: Array<[string, unknown, string[]]> = [
    ["not an object", "event", ["body"]],
    ["missing properties", { event: "e" }, ["properties"]],
    ["missing time", { event: "e", properties: { distinct_id: "u" } }, ["properties.time"]],
    [
      "time as ISO text",
      { event: "e", properties: { time: "2024-01-01", distinct_id: "u" } },
      ["properties.time"],
    ],
    ["negative time", { event: "e", properties: { time: -1, distinct_id: "u" } }, ["properties.time"]],
    ["blank event name", { event: " ", properties: { time: 1, distinct_id: "u" } }, ["event"]],
    [
      "object distinct_id",
      { event: "e", properties: { time: 1, distinct_id: { id: 1 } } },
      ["properties.distinct_id"],
    ],
    ["no identity at all", { event: "e", properties: { time: 1, plan: "x" } }, ["properties"]],
  ];

  it.each(invalid)("rejects %s with an error naming the field", (_label, input, properties) => {
    let caught: unknown;
    try {
      convertAnalyticsEvent(input);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(EventConversionError);
    expect(caught).toBeInstanceOf(UsageError);
    const error = caught as EventConversionError;
    expect(error.errors.map((e) => e.property)).toEqual(properties);
    expect(error.message).toContain(properties[0]);
  });
});
