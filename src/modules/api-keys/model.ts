import { t } from 'elysia'
import { checkedByService, documentOnly } from '../../http/published-schema'
import { FOLDER_ID_PATTERN } from '../folders/model'
import { timeZoneName } from '../../http/time-zone'
import { DAYS, PERMISSIONS } from '../identity'
import { ApiKey } from '../identity/model'

export const Grant = t.Union([t.Literal('*'), ...PERMISSIONS.map((p) => t.Literal(p))], { description: 'A permission name, or * for all' })

const Nullable = <T extends Parameters<typeof t.Union>[0][number]>(schema: T, description?: string) =>
  t.Optional(t.Union([schema, t.Null()], description ? { description } : {}))

// A restriction as it is sent: the shape of the view (identity/model.ts, platform/key-restrictions.ts) with
// every rule the API enforces on the way in stated, so the document says what a request must be. A view
// keeps the plain shape: a key stored before a rule was stated is still answered as it is.
//
// The time zone and the days are published here and checked by the service (http/published-schema.ts): a
// schedule is nullable, and the validator reports anything wrong inside a nullable object only as
// "schedule: Expected union value", where the service names the day or the zone and lists what is allowed.

const Day = t.Union(
  DAYS.map((d) => t.Literal(d)),
  { description: 'A day of the week: 0 = Sunday … 6 = Saturday' },
)

const ScheduleInput = t.Object(
  {
    timezone: timeZoneName(),
    days: checkedByService(t.Array(Day, { minItems: 1, description: 'Days the window opens on, 0 = Sunday; at least one (a day listed twice counts once)' })),
    startMinute: t.Integer({ minimum: 0, maximum: 1439, description: 'Minutes after local midnight' }),
    endMinute: t.Integer({ minimum: 0, maximum: 1440, description: 'Exclusive; below startMinute the window wraps midnight; never equal to it' }),
  },
  { additionalProperties: false },
)

// "At least one domain, tag or folder" is stated as anyOf, which the route's validator does not apply to an object
// (TypeBox checks an object's own keywords only): the service refuses an empty scope, naming scopeFilters.
// The members name no type, so null (no scope), which the document folds into this schema's type, passes.
const nonEmpty = (list: 'domains' | 'tags' | 'folders') => ({ required: [list], properties: { [list]: { type: 'array', minItems: 1 } } })
const ScopeFiltersInput = t.Object(
  {
    domains: t.Optional(t.Array(t.String(), { description: 'Domains whose links are in scope (lower-cased)' })),
    tags: t.Optional(t.Array(t.String(), { description: 'A link is in scope when it carries one of these tags' })),
    folders: t.Optional(
      t.Array(t.String({ maxLength: 128, ...documentOnly({ pattern: FOLDER_ID_PATTERN }) }), {
        description: 'fld_…: a link is in scope when it is filed in one of these folders; the key sees and changes only these folders',
      }),
    ),
  },
  {
    additionalProperties: false,
    anyOf: [nonEmpty('domains'), nonEmpty('tags'), nonEmpty('folders')],
    description: 'At least one of domains, tags and folders names something; a link must match every list given',
  },
)

/** The settings a key can be created or changed with (spec 2.7), shared by POST and PATCH. */
const settings = {
  permissions: t.Optional(t.Array(Grant, { minItems: 1, uniqueItems: true, description: "Defaults to the calling key's permissions; never wider than them" })),
  allowedIps: t.Optional(
    t.Array(t.String({ maxLength: 64 }), { maxItems: 100, description: 'IPv4/IPv6 addresses or CIDRs the key may be used from; empty means any' }),
  ),
  scopeFilters: Nullable(ScopeFiltersInput, 'Links the key may see and change: by domain, tag and/or folder'),
  schedule: Nullable(ScheduleInput, 'When the key works: IANA time zone, days (0 = Sunday) and a minute window; start > end wraps midnight'),
  monthlyCallCap: Nullable(t.Integer({ minimum: 1 }), 'Calls per UTC calendar month'),
  rateLimitOverride: Nullable(t.Integer({ minimum: 1, maximum: 100_000 }), 'Requests per minute, replacing the default 600'),
  expiresAt: Nullable(t.String({ format: 'date-time' }), 'When the key stops working; must be in the future (null: never)'),
}

/** The service trims the name and refuses a blank one: at least one character that is not a space. */
const KeyName = t.String({ minLength: 1, maxLength: 100, pattern: '\\S' })

export const CreateApiKeyBody = t.Object(
  {
    name: KeyName,
    mode: t.Optional(
      t.Union([t.Literal('live'), t.Literal('test')], { description: "Defaults to the calling key's mode; a test key can only create test keys" }),
    ),
    ...settings,
  },
  { additionalProperties: false },
)

export const UpdateApiKeyBody = t.Object({ name: t.Optional(KeyName), ...settings }, { additionalProperties: false, minProperties: 1 })

// The bodies of the key actions are optional: the action is the path, and what a body adds has a default.

/** Resume takes nothing; a body, when sent, is an empty object (anything in it is refused, not ignored). */
export const EmptyBody = t.Optional(t.Object({}, { additionalProperties: false }))

export const ReasonBody = t.Optional(t.Object({ reason: t.Optional(t.String({ maxLength: 500 })) }, { additionalProperties: false }))

export const RotateBody = t.Optional(
  t.Object(
    { graceHours: t.Optional(t.Integer({ minimum: 0, maximum: 720, description: 'Hours the old secret keeps working (default 24; 0 stops it at once)' })) },
    { additionalProperties: false },
  ),
)

export const CreatedApiKey = t.Composite([ApiKey, t.Object({ key: t.String({ description: 'The secret, shown only in this response' }) })], {
  title: 'CreatedApiKey',
})
