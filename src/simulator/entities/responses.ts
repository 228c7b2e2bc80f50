// Response bodies shared by the entity routes, in the real service's shapes (see
// ../shared/api/README.md "Errors and limits").
import type { z } from "zod";
import type { SimResponse } from "../types.ts";

export const INVALID_REQUEST_MESSAGE = "Invalid request. Please check the request input and try again.";
export const NOT_FOUND_MESSAGE = "Not Found. The requested resource could not be found.";

/** One bad field of a 400: `property` is the dotted path into the request (`groups.1.size`). */
export interface FieldError {
  property: string;
  message: string;
}

export function badRequest(errors: FieldError[]): SimResponse {
  return { status: 400, body: { status: 400, message: INVALID_REQUEST_MESSAGE, errors } };
}

export function notFound(): SimResponse {
  return { status: 404, body: { status: 404, message: NOT_FOUND_MESSAGE } };
}

/** Every zod issue as a FieldError, so that a 400 names each bad field at once. */
export function fieldErrors(error: z.ZodError, prefix = ""): FieldError[] {
  return error.issues.map((issue) => ({
    property: [prefix, ...issue.path.map(String)].filter((part) => part !== "").join(".") || "body",
    message: issue.message,
  }));
}
