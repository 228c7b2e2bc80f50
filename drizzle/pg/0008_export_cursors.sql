CREATE TABLE "export_cursors" (
	"project" text NOT NULL,
	"name" text NOT NULL,
	"seq" bigint NOT NULL,
	"updated_at" bigint NOT NULL,
	CONSTRAINT "export_cursors_project_name_pk" PRIMARY KEY("project","name")
);
