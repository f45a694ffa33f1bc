CREATE TABLE `bridge_pages` (
	`id` text PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`is_test` integer NOT NULL,
	`domain` text NOT NULL,
	`slug` text NOT NULL,
	`title` text NOT NULL,
	`description` text,
	`lang` text NOT NULL,
	`theme` text NOT NULL,
	`og_image_url` text,
	`template_slug` text,
	`saved_template_id` text,
	`version` integer NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`workspace_id`) REFERENCES `workspaces`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `bridge_pages_domain_slug_unique` ON `bridge_pages` (`domain`,`slug`);--> statement-breakpoint
CREATE INDEX `bridge_pages_workspace_created_idx` ON `bridge_pages` (`workspace_id`,`created_at`,`id`);--> statement-breakpoint
CREATE TABLE `page_blocks` (
	`id` text PRIMARY KEY NOT NULL,
	`page_id` text NOT NULL,
	`column_id` text NOT NULL,
	`position` integer NOT NULL,
	`type` text NOT NULL,
	`fields` text NOT NULL,
	FOREIGN KEY (`page_id`) REFERENCES `bridge_pages`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`column_id`) REFERENCES `page_columns`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `page_blocks_page_idx` ON `page_blocks` (`page_id`,`column_id`,`position`);--> statement-breakpoint
CREATE TABLE `page_columns` (
	`id` text PRIMARY KEY NOT NULL,
	`page_id` text NOT NULL,
	`section_id` text NOT NULL,
	`position` integer NOT NULL,
	`width` integer NOT NULL,
	FOREIGN KEY (`page_id`) REFERENCES `bridge_pages`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`section_id`) REFERENCES `page_sections`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `page_columns_page_idx` ON `page_columns` (`page_id`,`section_id`,`position`);--> statement-breakpoint
CREATE TABLE `page_sections` (
	`id` text PRIMARY KEY NOT NULL,
	`page_id` text NOT NULL,
	`position` integer NOT NULL,
	`layout` text NOT NULL,
	FOREIGN KEY (`page_id`) REFERENCES `bridge_pages`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `page_sections_page_idx` ON `page_sections` (`page_id`,`position`);--> statement-breakpoint
CREATE TABLE `page_stats` (
	`page_id` text NOT NULL,
	`block_id` text NOT NULL,
	`day` integer NOT NULL,
	`count` integer NOT NULL,
	PRIMARY KEY(`page_id`, `block_id`, `day`),
	FOREIGN KEY (`page_id`) REFERENCES `bridge_pages`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `saved_templates` (
	`id` text PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`name` text NOT NULL,
	`description` text,
	`source_page_id` text,
	`title` text NOT NULL,
	`lang` text NOT NULL,
	`theme` text NOT NULL,
	`sections` text NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`workspace_id`) REFERENCES `workspaces`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `saved_templates_workspace_idx` ON `saved_templates` (`workspace_id`,`created_at`);--> statement-breakpoint
ALTER TABLE `links` ADD `bridge_page_id` text;