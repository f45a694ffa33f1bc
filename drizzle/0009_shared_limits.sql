CREATE TABLE `limit_windows` (
	`name` text PRIMARY KEY NOT NULL,
	`window_start` integer NOT NULL,
	`count` integer NOT NULL,
	`expires_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `limit_windows_expires_idx` ON `limit_windows` (`expires_at`);--> statement-breakpoint
CREATE TABLE `spent_captchas` (
	`signature` text PRIMARY KEY NOT NULL,
	`expires_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `spent_captchas_expires_idx` ON `spent_captchas` (`expires_at`);