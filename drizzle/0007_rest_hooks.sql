ALTER TABLE `webhook_endpoints` ADD `kind` text DEFAULT 'endpoint' NOT NULL;--> statement-breakpoint
ALTER TABLE `webhook_endpoints` ADD `deleted_at` integer;