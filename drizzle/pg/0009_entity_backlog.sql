CREATE TABLE "entity_backlog" (
	"kind" text NOT NULL,
	"entity_key" text NOT NULL,
	"newest_seq" bigint NOT NULL,
	"pending_since" bigint NOT NULL,
	"sync_run_id" integer,
	CONSTRAINT "entity_backlog_kind_entity_key_pk" PRIMARY KEY("kind","entity_key")
);
