CREATE TABLE `clicks` (
	`id` text PRIMARY KEY NOT NULL,
	`link_id` text NOT NULL,
	`workspace_id` text NOT NULL,
	`clicked_at` integer NOT NULL,
	`visitor_hash` text NOT NULL,
	`user_agent` text,
	`referrer` text,
	`referrer_host` text,
	`country` text,
	`city` text,
	`device` text,
	`browser` text,
	`os` text,
	`is_bot` integer NOT NULL,
	FOREIGN KEY (`link_id`) REFERENCES `links`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `clicks_link_time_idx` ON `clicks` (`link_id`,`clicked_at`);--> statement-breakpoint
CREATE INDEX `clicks_workspace_time_idx` ON `clicks` (`workspace_id`,`clicked_at`);--> statement-breakpoint
CREATE TABLE `link_addresses` (
	`link_id` text NOT NULL,
	`ip_hash` text NOT NULL,
	`first_seen_at` integer NOT NULL,
	PRIMARY KEY(`link_id`, `ip_hash`),
	FOREIGN KEY (`link_id`) REFERENCES `links`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `link_tags` (
	`link_id` text NOT NULL,
	`tag` text NOT NULL,
	PRIMARY KEY(`link_id`, `tag`),
	FOREIGN KEY (`link_id`) REFERENCES `links`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `link_tags_tag_idx` ON `link_tags` (`tag`,`link_id`);--> statement-breakpoint
CREATE TABLE `link_usage` (
	`workspace_id` text NOT NULL,
	`month` text NOT NULL,
	`created` integer NOT NULL,
	PRIMARY KEY(`workspace_id`, `month`),
	FOREIGN KEY (`workspace_id`) REFERENCES `workspaces`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `link_visitors` (
	`link_id` text NOT NULL,
	`visitor_hash` text NOT NULL,
	`first_seen_at` integer NOT NULL,
	PRIMARY KEY(`link_id`, `visitor_hash`),
	FOREIGN KEY (`link_id`) REFERENCES `links`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `links` (
	`id` text PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`domain` text NOT NULL,
	`slug` text NOT NULL,
	`destination_url` text NOT NULL,
	`title` text,
	`description` text,
	`tags` text NOT NULL,
	`folder_id` text,
	`campaign_id` text,
	`redirect_status` integer NOT NULL,
	`fallback_url` text,
	`password_hash` text,
	`expires_at` integer,
	`click_limit` integer,
	`unique_ip_limit` integer,
	`public_stats_enabled` integer NOT NULL,
	`utm_source` text,
	`utm_medium` text,
	`utm_campaign` text,
	`utm_term` text,
	`utm_content` text,
	`og_title` text,
	`og_description` text,
	`og_image_url` text,
	`twitter_card` text,
	`deep_link_enabled` integer NOT NULL,
	`captcha_enabled` integer NOT NULL,
	`consent_required` integer NOT NULL,
	`conversion_tracking` integer NOT NULL,
	`is_active` integer NOT NULL,
	`is_archived` integer NOT NULL,
	`is_test` integer NOT NULL,
	`total_clicks` integer NOT NULL,
	`unique_clicks` integer NOT NULL,
	`created_by_key_id` text,
	`search_text` text NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`workspace_id`) REFERENCES `workspaces`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `links_domain_slug_unique` ON `links` (`domain`,`slug`);--> statement-breakpoint
CREATE INDEX `links_workspace_created_idx` ON `links` (`workspace_id`,`created_at`,`id`);--> statement-breakpoint
CREATE TABLE `settings` (
	`key` text PRIMARY KEY NOT NULL,
	`value` text NOT NULL,
	`created_at` integer NOT NULL
);
