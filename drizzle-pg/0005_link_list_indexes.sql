-- Edited by hand after drizzle-kit: the text keys in COLLATE "C", the byte order GET /links sorts and compares
-- them in (engine.byteOrder), so a sort and its id ties are served by the index on any database locale.
CREATE INDEX "links_workspace_updated_idx" ON "links" USING btree ("workspace_id","updated_at","id" COLLATE "C");--> statement-breakpoint
CREATE INDEX "links_workspace_clicks_idx" ON "links" USING btree ("workspace_id","total_clicks","id" COLLATE "C");--> statement-breakpoint
CREATE INDEX "links_workspace_last_click_idx" ON "links" USING btree ("workspace_id","last_clicked_at","id" COLLATE "C");--> statement-breakpoint
CREATE INDEX "links_workspace_title_idx" ON "links" USING btree ("workspace_id","title" COLLATE "C","id" COLLATE "C");--> statement-breakpoint
CREATE INDEX "links_workspace_slug_idx" ON "links" USING btree ("workspace_id","slug" COLLATE "C","id" COLLATE "C");--> statement-breakpoint
CREATE INDEX "links_workspace_folder_idx" ON "links" USING btree ("workspace_id","folder_id","is_test","created_at","id" COLLATE "C");--> statement-breakpoint
CREATE INDEX "links_workspace_flags_idx" ON "links" USING btree ("workspace_id","is_test","is_archived","is_active");