// Ports for the data layer (issue 12): each module's repo declares plain row types and an interface, and
// only src/db/ and the repo files themselves see drizzle's tables. Services, routes and the HTTP layer get
// plain types, so another database can sit behind the same ports.
import { expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { dirname, join, normalize, relative } from 'node:path'
import type {
  apiKeys,
  conversions,
  domains,
  idempotencyRecords,
  links,
  users,
  webhookAttempts,
  webhookDeliveries,
  webhookEndpoints,
  workspaces,
} from '../../src/db/schema'
import type { ConversionRow, NewConversion } from '../../src/modules/conversions/port'
import type { DomainRow } from '../../src/modules/domains/port'
import type { ApiKeyRow, NewApiKey, NewUser, NewWorkspace, UserRow, WorkspaceRow } from '../../src/modules/identity/port'
import type { LinkRow, NewLink } from '../../src/modules/links/port'
import type { IdempotencyRecord, NewIdempotencyRecord } from '../../src/modules/system/port-idempotency'
import type { AttemptRow, DeliveryRow, EndpointRow, NewAttempt, NewDelivery, NewEndpoint } from '../../src/modules/webhooks/port'

const ROOT = join(import.meta.dir, '../..')
const SOURCES = [...new Bun.Glob('src/**/*.ts').scanSync({ cwd: ROOT })].sort()

/** db/ owns the tables; a repo file (repo*.ts) maps them onto its port's plain types. */
const seesTables = (file: string) => file.startsWith('src/db/') || /^repo[^/]*\.ts$/.test(file.split('/').at(-1)!)

const SPECIFIERS = /(?:\bfrom\s*|\bimport\s*\(?\s*)['"]([^'"]+)['"]/g

/** What `file` (a path from the repository root) does that only db/ and repo files may do. */
function tableLeaks(file: string, source: string): string[] {
  if (seesTables(file)) return []
  const schemaImports = [...source.matchAll(SPECIFIERS)]
    .map((m) => m[1]!)
    .filter((spec) => spec.startsWith('.'))
    .map((spec) => relative(ROOT, normalize(join(ROOT, dirname(file), spec))))
    .filter((target) => /^src\/db\/schema(\/|\.ts$|$)/.test(target))
    .map((target) => `${file}: imports ${target}`)
  const inferred = [...source.matchAll(/\$infer(?:Select|Insert)\b/g)].map((m) => `${file}: ${m[0]}`)
  return [...schemaImports, ...inferred]
}

test('outside src/db/ and repo files, no file imports db/schema or infers a row type from a table', () => {
  // The detector itself.
  expect(tableLeaks('src/modules/links/service.ts', "import { links } from '../../db/schema'")).toHaveLength(1)
  expect(tableLeaks('src/http/auth.ts', "import type { apiKeys } from '../db/schema/identity'")).toHaveLength(1)
  expect(tableLeaks('src/modules/links/service.ts', 'type Row = typeof links.$inferSelect')).toHaveLength(1)
  expect(tableLeaks('src/modules/links/repo.ts', "import { links } from '../../db/schema'\ntype Row = typeof links.$inferSelect")).toEqual([])
  expect(tableLeaks('src/jobs/repo-queue.ts', "import { jobs } from '../db/schema'")).toEqual([])
  expect(tableLeaks('src/modules/links/service.ts', "import type { LinkRow } from './repo'\nimport { tx } from '../../db/tx'")).toEqual([])

  const offenders = SOURCES.flatMap((file) => tableLeaks(file, readFileSync(join(ROOT, file), 'utf8')))
  expect(offenders).toEqual([])
})

// The plain types are written out by hand; these fail `bun run typecheck` when one of them and its table
// part ways (a column added, renamed, made nullable, or an enum changed).
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false
function sameType<A, B>(..._: Same<A, B> extends true ? [] : ['the plain type and its table differ']) {}

test('the plain row types describe their tables exactly', () => {
  sameType<UserRow, typeof users.$inferSelect>()
  sameType<NewUser, typeof users.$inferInsert>()
  sameType<WorkspaceRow, typeof workspaces.$inferSelect>()
  sameType<NewWorkspace, typeof workspaces.$inferInsert>()
  sameType<ApiKeyRow, typeof apiKeys.$inferSelect>()
  sameType<NewApiKey, typeof apiKeys.$inferInsert>()
  sameType<LinkRow, typeof links.$inferSelect>()
  sameType<DomainRow, typeof domains.$inferSelect>()
  sameType<NewLink, typeof links.$inferInsert>()
  sameType<EndpointRow, typeof webhookEndpoints.$inferSelect>()
  sameType<NewEndpoint, typeof webhookEndpoints.$inferInsert>()
  sameType<DeliveryRow, typeof webhookDeliveries.$inferSelect>()
  sameType<NewDelivery, typeof webhookDeliveries.$inferInsert>()
  sameType<AttemptRow, typeof webhookAttempts.$inferSelect>()
  sameType<NewAttempt, typeof webhookAttempts.$inferInsert>()
  sameType<ConversionRow, typeof conversions.$inferSelect>()
  sameType<NewConversion, typeof conversions.$inferInsert>()
  sameType<IdempotencyRecord, typeof idempotencyRecords.$inferSelect>()
  sameType<NewIdempotencyRecord, typeof idempotencyRecords.$inferInsert>()
  // The check itself tells types apart.
  // @ts-expect-error a nullable column typed as required
  sameType<{ a: string }, { a: string | null }>()
  // @ts-expect-error an optional column typed as required
  sameType<{ a: string | null }, { a?: string | null }>()
})
