CREATE TABLE `folders` (
	`id` text PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`name` text NOT NULL,
	`description` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`workspace_id`) REFERENCES `workspaces`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `folders_workspace_name_idx` ON `folders` (`workspace_id`,`name`,`id`);--> statement-breakpoint
CREATE TABLE `tags` (
	`id` text PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`name` text NOT NULL,
	`color` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`workspace_id`) REFERENCES `workspaces`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `tags_workspace_name_unique` ON `tags` (`workspace_id`,`name`);--> statement-breakpoint
ALTER TABLE `links` ADD `last_clicked_at` integer;--> statement-breakpoint
ALTER TABLE `links` ADD `external_id` text;--> statement-breakpoint
CREATE UNIQUE INDEX `links_workspace_external_id_unique` ON `links` (`workspace_id`,`external_id`);--> statement-breakpoint
-- Every tag name links already carry becomes a tag of its workspace.
INSERT INTO `tags` (`id`, `workspace_id`, `name`, `color`, `created_at`, `updated_at`)
SELECT 'tag_' || lower(hex(randomblob(10))), l.`workspace_id`, lt.`tag`, NULL, min(l.`created_at`), min(l.`created_at`)
FROM `link_tags` lt JOIN `links` l ON l.`id` = lt.`link_id`
GROUP BY l.`workspace_id`, lt.`tag`;
