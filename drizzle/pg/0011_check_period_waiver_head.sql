-- A check keeps the store's newest seq it saw (control_checks.last_seq): the next default check also
-- takes records stored after it whose time falls before its period (a sync that failed for a day).
-- NULL for the checks made before: their next check starts as before. A check of a given period
-- (--from/--to, period_given 1) no longer moves the start of the next default one.
-- meta records the waiver register's head ('waiver_chain:head', its last row's seq and chain hash), written
-- with each waiver from now on and here for the register as it stands, so that `verify` sees rows removed
-- from its end (a withdrawal deleted, the waiver back in force).
-- Hand-written (drizzle-kit generate --custom).
ALTER TABLE "control_checks" ADD COLUMN "last_seq" bigint;--> statement-breakpoint
ALTER TABLE "control_checks" ADD COLUMN "period_given" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
INSERT INTO "meta" ("key", "value", "updated_at")
  SELECT 'waiver_chain:head', json_build_object('seq', seq, 'hash', chain_hash)::text, created_at
  FROM "control_waivers" ORDER BY seq DESC LIMIT 1;
