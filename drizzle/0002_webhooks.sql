CREATE TABLE `webhook_attempts` (
	`id` text PRIMARY KEY NOT NULL,
	`delivery_id` text NOT NULL,
	`attempt` integer NOT NULL,
	`started_at` integer NOT NULL,
	`duration_ms` integer,
	`request` text NOT NULL,
	`response_status` integer,
	`response_headers` text,
	`response_body` text,
	`response_body_truncated` integer NOT NULL,
	`error` text,
	`address` text,
	FOREIGN KEY (`delivery_id`) REFERENCES `webhook_deliveries`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `webhook_attempts_delivery_idx` ON `webhook_attempts` (`delivery_id`,`attempt`);--> statement-breakpoint
CREATE TABLE `webhook_batch_events` (
	`delivery_id` text NOT NULL,
	`position` integer NOT NULL,
	`envelope` text NOT NULL,
	FOREIGN KEY (`delivery_id`) REFERENCES `webhook_deliveries`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `webhook_batch_events_delivery_idx` ON `webhook_batch_events` (`delivery_id`,`position`);--> statement-breakpoint
CREATE TABLE `webhook_deliveries` (
	`id` text PRIMARY KEY NOT NULL,
	`endpoint_id` text NOT NULL,
	`workspace_id` text NOT NULL,
	`event` text NOT NULL,
	`event_id` text,
	`payload` text,
	`status` text NOT NULL,
	`attempt` integer NOT NULL,
	`max_attempts` integer NOT NULL,
	`batch_size` integer NOT NULL,
	`batch_open` integer NOT NULL,
	`batch_closes_at` integer,
	`response_status` integer,
	`duration_ms` integer,
	`next_attempt_at` integer,
	`delivered_at` integer,
	`error_message` text,
	`replay_of_id` text,
	`replayable` integer NOT NULL,
	`is_ping` integer NOT NULL,
	`idempotency_key` text NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`endpoint_id`) REFERENCES `webhook_endpoints`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `webhook_deliveries_endpoint_idx` ON `webhook_deliveries` (`endpoint_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `webhook_deliveries_status_idx` ON `webhook_deliveries` (`endpoint_id`,`status`,`created_at`);--> statement-breakpoint
CREATE INDEX `webhook_deliveries_open_batch_idx` ON `webhook_deliveries` (`endpoint_id`) WHERE "webhook_deliveries"."batch_open" = 1;--> statement-breakpoint
CREATE TABLE `webhook_endpoints` (
	`id` text PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`name` text,
	`url` text NOT NULL,
	`events` text NOT NULL,
	`format` text NOT NULL,
	`mode` text NOT NULL,
	`is_active` integer NOT NULL,
	`failure_count` integer NOT NULL,
	`failing_since` integer,
	`disabled_reason` text,
	`custom_headers` text NOT NULL,
	`filters` text,
	`transform` text,
	`batch_enabled` integer NOT NULL,
	`batch_window_seconds` integer NOT NULL,
	`max_concurrent` integer NOT NULL,
	`mtls_enabled` integer NOT NULL,
	`secret` text NOT NULL,
	`previous_secret` text,
	`previous_secret_expires_at` integer,
	`last_success_at` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`workspace_id`) REFERENCES `workspaces`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `webhook_endpoints_fanout_idx` ON `webhook_endpoints` (`workspace_id`,`mode`,`is_active`);