// Audit log requests as the service reads them: the query's rules (dates, page, limit), and the request
// path built from it. Dates are always explicit and so is the sort order (see auditLogsRequestPath).
import { z } from "zod";
import { UsageError } from "../errors.ts";
import type { AuditLogQuery } from "./client.ts";

export const AUDIT_LOGS_PATH = "/console/v1/audit_logs";

const dateText = z.iso.date({ error: "Dates must be YYYY-MM-DD." });
const auditLogQuerySchema = z
  .object({
    startDate: dateText,
    endDate: dateText,
    page: z.number().int().min(1),
    limit: z.number().int().min(1),
    actionTypes: z.array(z.string().min(1)).readonly().optional(),
    latestID: z.string().min(1).optional(),
    sortOrder: z.enum(["asc", "desc"]).optional(),
  })
  .refine((q) => q.startDate <= q.endDate, { error: "startDate must not be after endDate." });

export type QueryValue = string | number | readonly string[] | undefined;

/** `path?query` with arrays as a repeated key (`actionTypes=a&actionTypes=b`), undefined left out. */
export function buildRequestPath(path: string, params: Record<string, QueryValue>): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value === undefined) continue;
    if (typeof value === "string" || typeof value === "number") search.append(key, String(value));
    else for (const item of value) search.append(key, item);
  }
  const query = search.toString();
  return query === "" ? path : `${path}?${query}`;
}

/**
 * The audit log page request. Dates are always explicit (without them the service searches only the
 * last 90 days) and so is the sort order, because `latestID` means "newer than" only in `desc`.
 */
export function auditLogsRequestPath(query: AuditLogQuery): string {
  const parsed = auditLogQuerySchema.safeParse(query);
  if (!parsed.success) {
    throw new UsageError(`Invalid audit log query: ${parsed.error.issues.map((i) => i.message).join(" ")}`);
  }
  const q = parsed.data;
  return buildRequestPath(AUDIT_LOGS_PATH, {
    startDate: q.startDate,
    endDate: q.endDate,
    page: q.page,
    limit: q.limit,
    sortOrder: q.sortOrder ?? "desc",
    latestID: q.latestID,
    actionTypes: q.actionTypes,
  });
}
