// The period and action-type filter of the report's queries; `%` stands for the alias of the table it
// filters. The CAST gives PostgreSQL the type of a NULL @types; json_each(text) is on PostgreSQL the
// store's own function (drizzle/pg/0005_portable_report_sql.sql), inlined as json_array_elements_text.
export const TYPES =
  "(CAST(@types AS TEXT) IS NULL OR %.action_type IN (SELECT value FROM json_each(@types)))";
const PERIOD = "%.occurred_at >= @start AND %.occurred_at < @end";

export function scoped(alias: string, text: string): string {
  return text.replaceAll("%", alias);
}

export function period(alias: string): string {
  return `${scoped(alias, PERIOD)}\n  AND ${scoped(alias, TYPES)}`;
}
