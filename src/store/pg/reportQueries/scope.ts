// The period and action-type filter every report query applies, and the byte-order collation text sorts
// with (PostgreSQL; src/store/reportQueries/scope.ts on SQLite). `%` stands for the filtered alias.
export const C = 'COLLATE "C"';
export const TYPES =
  "(@types::json IS NULL OR %.action_type IN (SELECT value FROM json_array_elements_text(@types::json)))";
const PERIOD = "%.occurred_at >= @start AND %.occurred_at < @end";

export function scoped(alias: string, text: string): string {
  return text.replaceAll("%", alias);
}

export function period(alias: string): string {
  return `${scoped(alias, PERIOD)}\n  AND ${scoped(alias, TYPES)}`;
}
