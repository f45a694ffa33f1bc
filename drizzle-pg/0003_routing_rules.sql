ALTER TABLE "clicks" ADD COLUMN "rule_id" text;--> statement-breakpoint
ALTER TABLE "clicks" ADD COLUMN "variant_id" text;--> statement-breakpoint
ALTER TABLE "links" ADD COLUMN "routing_rules" jsonb;--> statement-breakpoint
ALTER TABLE "links" ADD COLUMN "variants" jsonb;