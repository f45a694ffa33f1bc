CREATE TABLE `api_key_usage` (
	`key_id` text NOT NULL,
	`month` text NOT NULL,
	`calls` integer NOT NULL,
	PRIMARY KEY(`key_id`, `month`),
	FOREIGN KEY (`key_id`) REFERENCES `api_keys`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `api_keys` (
	`id` text PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`user_id` text NOT NULL,
	`name` text NOT NULL,
	`key_hash` text NOT NULL,
	`key_prefix` text NOT NULL,
	`mode` text NOT NULL,
	`permissions` text NOT NULL,
	`allowed_ips` text NOT NULL,
	`scope_filters` text,
	`schedule` text,
	`monthly_call_cap` integer,
	`rate_limit_override` integer,
	`expires_at` integer,
	`last_used_at` integer,
	`last_used_ip` text,
	`paused_at` integer,
	`paused_reason` text,
	`revoked_at` integer,
	`revoked_reason` text,
	`previous_key_hash` text,
	`previous_key_expires_at` integer,
	`rotated_at` integer,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`workspace_id`) REFERENCES `workspaces`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `api_keys_key_hash_unique` ON `api_keys` (`key_hash`);--> statement-breakpoint
CREATE INDEX `api_keys_previous_key_hash_idx` ON `api_keys` (`previous_key_hash`);--> statement-breakpoint
CREATE INDEX `api_keys_workspace_idx` ON `api_keys` (`workspace_id`);--> statement-breakpoint
CREATE TABLE `memberships` (
	`workspace_id` text NOT NULL,
	`user_id` text NOT NULL,
	`role` text NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`workspace_id`, `user_id`),
	FOREIGN KEY (`workspace_id`) REFERENCES `workspaces`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `memberships_user_idx` ON `memberships` (`user_id`);--> statement-breakpoint
CREATE TABLE `users` (
	`id` text PRIMARY KEY NOT NULL,
	`email` text NOT NULL,
	`name` text,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `users_email_unique` ON `users` (`email`);--> statement-breakpoint
CREATE TABLE `workspaces` (
	`id` text PRIMARY KEY NOT NULL,
	`slug` text NOT NULL,
	`name` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `workspaces_slug_unique` ON `workspaces` (`slug`);--> statement-breakpoint
CREATE TABLE `idempotency_records` (
	`id` text PRIMARY KEY NOT NULL,
	`api_key_id` text NOT NULL,
	`key` text NOT NULL,
	`method` text NOT NULL,
	`path` text NOT NULL,
	`request_hash` text NOT NULL,
	`response_status` integer,
	`response_body` text,
	`created_at` integer NOT NULL,
	`expires_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `idempotency_key_unique` ON `idempotency_records` (`api_key_id`,`key`);--> statement-breakpoint
CREATE INDEX `idempotency_expires_idx` ON `idempotency_records` (`expires_at`);--> statement-breakpoint
CREATE TABLE `jobs` (
	`id` text PRIMARY KEY NOT NULL,
	`type` text NOT NULL,
	`payload` text NOT NULL,
	`status` text NOT NULL,
	`run_at` integer NOT NULL,
	`attempts` integer NOT NULL,
	`max_attempts` integer NOT NULL,
	`unique_key` text,
	`locked_by` text,
	`locked_until` integer,
	`last_error` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `jobs_due_idx` ON `jobs` (`status`,`run_at`);--> statement-breakpoint
CREATE UNIQUE INDEX `jobs_unique_key_unique` ON `jobs` (`unique_key`);--> statement-breakpoint
CREATE TABLE `outbox` (
	`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`id` text NOT NULL,
	`type` text NOT NULL,
	`mode` text NOT NULL,
	`workspace_id` text NOT NULL,
	`data` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `outbox_id_unique` ON `outbox` (`id`);--> statement-breakpoint
CREATE TABLE `outbox_cursor` (
	`name` text PRIMARY KEY NOT NULL,
	`seq` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
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
--> statement-breakpoint
CREATE TABLE `conversions` (
	`id` text PRIMARY KEY NOT NULL,
	`click_id` text NOT NULL,
	`link_id` text NOT NULL,
	`workspace_id` text NOT NULL,
	`event_name` text NOT NULL,
	`value` real,
	`currency` text,
	`metadata` text,
	`fingerprint` text NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`link_id`) REFERENCES `links`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `conversions_link_time_idx` ON `conversions` (`link_id`,`created_at`,`currency`,`value`);--> statement-breakpoint
CREATE INDEX `conversions_workspace_time_idx` ON `conversions` (`workspace_id`,`created_at`,`link_id`,`currency`,`value`);--> statement-breakpoint
CREATE INDEX `conversions_fingerprint_idx` ON `conversions` (`fingerprint`,`created_at`);