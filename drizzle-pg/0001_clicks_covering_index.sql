DROP INDEX "clicks_link_time_idx";--> statement-breakpoint
CREATE INDEX "clicks_link_time_idx" ON "clicks" USING btree ("link_id","clicked_at","is_bot","visitor_hash");