CREATE TABLE `cli_secrets` (
	`key_id` text PRIMARY KEY NOT NULL,
	`key_hash` text NOT NULL,
	`secret` text NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`key_id`) REFERENCES `api_keys`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `cli_session_events` (
	`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`session_id` text NOT NULL,
	`event_id` text NOT NULL,
	`type` text NOT NULL,
	`body` text NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`session_id`) REFERENCES `cli_sessions`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `cli_session_events_session_idx` ON `cli_session_events` (`session_id`,`seq`);--> statement-breakpoint
CREATE TABLE `cli_sessions` (
	`id` text PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`key_id` text NOT NULL,
	`mode` text NOT NULL,
	`events` text NOT NULL,
	`device_name` text,
	`dropped` integer NOT NULL,
	`created_at` integer NOT NULL,
	`last_poll_at` integer,
	`expires_at` integer NOT NULL,
	FOREIGN KEY (`workspace_id`) REFERENCES `workspaces`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`key_id`) REFERENCES `api_keys`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `cli_sessions_workspace_idx` ON `cli_sessions` (`workspace_id`,`mode`,`expires_at`);