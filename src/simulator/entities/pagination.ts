// `limit`/`page` handling and the list envelope's `pagination` object, shaped like the audit log's:
// links without a scheme, previousPage null on page 1, totalItems of the whole list.
import { z } from "zod";
import type { SimRequest } from "../types.ts";
import type { FieldError } from "./responses.ts";
import { fieldErrors } from "./responses.ts";

/** Same default as the audit log endpoint; no maximum is documented, so none is enforced. */
const DEFAULT_LIMIT = 100;

const positiveIntText = (name: string) =>
  z
    .string()
    .regex(/^\d+$/, { error: `${name} must be a positive integer` })
    .transform(Number)
    .refine((n) => Number.isSafeInteger(n) && n >= 1, { error: `${name} must be a positive integer` });

const pageQuerySchema = z.object({
  limit: positiveIntText("limit").optional(),
  page: positiveIntText("page").optional(),
});

export interface PageRequest {
  limit: number;
  page: number;
  /** Index of the first item of the page in the whole list. */
  offset: number;
}

export function parsePageQuery(query: URLSearchParams): PageRequest | FieldError[] {
  const parsed = pageQuerySchema.safeParse({
    limit: query.get("limit") ?? undefined,
    page: query.get("page") ?? undefined,
  });
  if (!parsed.success) return fieldErrors(parsed.error);
  const limit = parsed.data.limit ?? DEFAULT_LIMIT;
  const page = parsed.data.page ?? 1;
  return { limit, page, offset: (page - 1) * limit };
}

export interface PaginationBody {
  itemsPerPage: number;
  pageNumber: number;
  totalItems: number;
  nextPage: string | null;
  previousPage: string | null;
  all: string;
}

/**
 * The real service writes links as `statsigapi.net/console/v1/…?page=3&limit=3` (no scheme). The
 * host is the one the client addressed, so links point back at the simulator.
 */
function paginationBody(request: SimRequest, page: PageRequest, totalItems: number): PaginationBody {
  const base = `${request.headers.host ?? "statsigapi.net"}${request.pathname}`;
  const link = (n: number) => `${base}?page=${n}&limit=${page.limit}`;
  return {
    itemsPerPage: page.limit,
    pageNumber: page.page,
    totalItems,
    nextPage: page.offset + page.limit < totalItems ? link(page.page + 1) : null,
    previousPage: page.page > 1 ? link(page.page - 1) : null,
    all: base,
  };
}

/** A full list response: `items` are already the page's items. */
export function listResponse(
  request: SimRequest,
  page: PageRequest,
  totalItems: number,
  message: string,
  items: unknown[],
) {
  return {
    status: 200,
    body: { message, data: items, pagination: paginationBody(request, page, totalItems) },
  };
}
