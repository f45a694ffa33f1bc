ALTER TABLE `clicks` ADD `rule_id` text;--> statement-breakpoint
ALTER TABLE `clicks` ADD `variant_id` text;--> statement-breakpoint
ALTER TABLE `links` ADD `routing_rules` text;--> statement-breakpoint
ALTER TABLE `links` ADD `variants` text;