// The period and action-type filter every report query applies, written once for all of them (SQLite).
// `%` in a fragment stands for the alias of the table it filters.
export const TYPES = "(@types IS NULL OR %.action_type IN (SELECT value FROM json_each(@types)))";
const PERIOD = "%.occurred_at >= @start AND %.occurred_at < @end";

export function scoped(alias: string, text: string): string {
  return text.replaceAll("%", alias);
}

export function period(alias: string): string {
  return `${scoped(alias, PERIOD)}\n  AND ${scoped(alias, TYPES)}`;
}
