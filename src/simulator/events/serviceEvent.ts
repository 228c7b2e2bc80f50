// The service's event shape (spec, "Events"), as the event webhook accepts it. The spec leaves
// required fields open; we require what an event is useless without: a name, a unit to attribute it
// to, and an instant.
import { z } from "zod";

const nonBlank = (field: string) =>
  z
    .string({ error: `${field} must be a string` })
    .refine((text) => text.trim() !== "", { error: `${field} must not be empty` });

const unitId = (field: string) =>
  z.string({ error: `${field} must be a string` }).min(1, { error: `${field} must not be empty` });

export const serviceEventSchema = z.object({
  event: nonBlank("event"),
  // Loose: the service's user object carries more (email, customIDs…) that must not be dropped.
  user: z
    .looseObject(
      { userID: unitId("user.userID").optional(), stableID: unitId("user.stableID").optional() },
      {
        error: "user must be an object with a userID or a stableID",
      },
    )
    .refine((user) => user.userID !== undefined || user.stableID !== undefined, {
      error: "user needs a userID or a stableID",
    }),
  timestamp: z
    .number({ error: "timestamp must be an integer (epoch milliseconds)" })
    .int({ error: "timestamp must be an integer (epoch milliseconds)" })
    .nonnegative({ error: "timestamp must not be negative" }),
  metadata: z.record(z.string(), z.unknown(), { error: "metadata must be an object" }).optional(),
});

export type ServiceEvent = z.infer<typeof serviceEventSchema>;
