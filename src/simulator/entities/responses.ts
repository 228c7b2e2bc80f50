// Error responses of the entity routes: the simulator's shared shapes, plus zod issues turned into
// the `errors` list of a 400.
import type { z } from "zod";
import type { FieldError } from "../responses.ts";

export type { FieldError } from "../responses.ts";
export { badRequest, notFound } from "../responses.ts";

/** Every zod issue as a FieldError (`property` is the dotted path, e.g. `groups.1.size`). */
export function fieldErrors(error: z.ZodError): FieldError[] {
  return error.issues.map((issue) => ({
    property: issue.path.map(String).join(".") || "body",
    message: issue.message,
  }));
}
