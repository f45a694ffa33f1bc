CREATE INDEX `links_workspace_updated_idx` ON `links` (`workspace_id`,`updated_at`,`id`);--> statement-breakpoint
CREATE INDEX `links_workspace_clicks_idx` ON `links` (`workspace_id`,`total_clicks`,`id`);--> statement-breakpoint
CREATE INDEX `links_workspace_last_click_idx` ON `links` (`workspace_id`,`last_clicked_at`,`id`);--> statement-breakpoint
CREATE INDEX `links_workspace_title_idx` ON `links` (`workspace_id`,`title`,`id`);--> statement-breakpoint
CREATE INDEX `links_workspace_slug_idx` ON `links` (`workspace_id`,`slug`,`id`);--> statement-breakpoint
CREATE INDEX `links_workspace_folder_idx` ON `links` (`workspace_id`,`folder_id`,`is_test`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `links_workspace_flags_idx` ON `links` (`workspace_id`,`is_test`,`is_archived`,`is_active`);