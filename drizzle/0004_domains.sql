CREATE TABLE `domains` (
	`id` text PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`domain` text NOT NULL,
	`verification_status` text NOT NULL,
	`dns_status` text NOT NULL,
	`ssl_status` text NOT NULL,
	`token` text NOT NULL,
	`failure_reason` text,
	`seen` text,
	`root_redirect_url` text,
	`not_found_url` text,
	`expired_url` text,
	`last_checked_at` integer,
	`next_check_at` integer,
	`verified_at` integer,
	`misconfigured_at` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`workspace_id`) REFERENCES `workspaces`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `domains_workspace_domain_idx` ON `domains` (`workspace_id`,`domain`);--> statement-breakpoint
CREATE UNIQUE INDEX `domains_verified_idx` ON `domains` (`domain`) WHERE verification_status = 'verified';--> statement-breakpoint
CREATE UNIQUE INDEX `domains_token_idx` ON `domains` (`token`);