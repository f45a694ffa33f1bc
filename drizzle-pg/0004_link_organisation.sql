CREATE TABLE "folders" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"name" text NOT NULL,
	"description" text,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "tags" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"name" text NOT NULL,
	"color" text,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL
);
--> statement-breakpoint
ALTER TABLE "links" ADD COLUMN "last_clicked_at" bigint;--> statement-breakpoint
ALTER TABLE "links" ADD COLUMN "external_id" text;--> statement-breakpoint
ALTER TABLE "folders" ADD CONSTRAINT "folders_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "tags" ADD CONSTRAINT "tags_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "folders_workspace_name_idx" ON "folders" USING btree ("workspace_id","name","id");--> statement-breakpoint
CREATE UNIQUE INDEX "tags_workspace_name_unique" ON "tags" USING btree ("workspace_id","name");--> statement-breakpoint
CREATE UNIQUE INDEX "links_workspace_external_id_unique" ON "links" USING btree ("workspace_id","external_id");--> statement-breakpoint
-- Every tag name links already carry becomes a tag of its workspace.
INSERT INTO "tags" ("id", "workspace_id", "name", "color", "created_at", "updated_at")
SELECT 'tag_' || substr(md5(random()::text || l."workspace_id" || lt."tag"), 1, 20), l."workspace_id", lt."tag", NULL, min(l."created_at"), min(l."created_at")
FROM "link_tags" lt JOIN "links" l ON l."id" = lt."link_id"
GROUP BY l."workspace_id", lt."tag";
