-- A check keeps the store's newest seq it saw (control_checks.last_seq): the next default check also
-- takes records stored after it whose time falls before its period (a sync that failed for a day).
-- NULL for the checks made before: their next check starts as before. A check of a given period
-- (--from/--to, period_given 1) no longer moves the start of the next default one.
-- Hand-written (drizzle-kit generate --custom).
ALTER TABLE "control_checks" ADD COLUMN "last_seq" bigint;--> statement-breakpoint
ALTER TABLE "control_checks" ADD COLUMN "period_given" integer DEFAULT 0 NOT NULL;
