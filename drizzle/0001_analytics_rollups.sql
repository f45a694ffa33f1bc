CREATE TABLE `link_rollups` (
	`link_id` text NOT NULL,
	`grain` text NOT NULL,
	`bucket` integer NOT NULL,
	`clicks` integer NOT NULL,
	`bots` integer NOT NULL,
	`visitors` blob,
	`dims` text NOT NULL,
	PRIMARY KEY(`link_id`, `grain`, `bucket`),
	FOREIGN KEY (`link_id`) REFERENCES `links`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `workspace_rollups` (
	`workspace_id` text NOT NULL,
	`grain` text NOT NULL,
	`bucket` integer NOT NULL,
	`clicks` integer NOT NULL,
	`bots` integer NOT NULL,
	`visitors` blob,
	`dims` text NOT NULL,
	PRIMARY KEY(`workspace_id`, `grain`, `bucket`),
	FOREIGN KEY (`workspace_id`) REFERENCES `workspaces`(`id`) ON UPDATE no action ON DELETE cascade
);
