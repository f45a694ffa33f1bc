// PostgreSQL migrations, generated from src/db/pg/schema.generated.ts (itself derived from the SQLite
// schema by scripts/generate-pg-schema.ts). `bun run db:generate` runs both engines' generators.
import { defineConfig } from 'drizzle-kit'

export default defineConfig({
  dialect: 'postgresql',
  schema: './src/db/pg/schema.generated.ts',
  out: './drizzle-pg',
})
