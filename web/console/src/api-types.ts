// The API's shapes as the console names them, all read from ./schema.generated.ts (generated from the
// OpenAPI document lnk serves: `bun run console:types`), so a change to a route's schema shows up here as a
// type error instead of a screen quietly reading a field that is gone. Nothing in this file is runtime code.
import type { components, paths } from './schema.generated'

export type { components, paths }

/** A named schema of the document (Link, ApiKey, WebhookEndpoint, …). */
export type Schema<Name extends keyof components['schemas']> = components['schemas'][Name]

export type Method = 'get' | 'post' | 'patch' | 'delete'

/** The documented paths (relative to /v1) that answer `M`. */
export type PathFor<M extends Method> = { [P in keyof paths]: paths[P][M] extends { responses: unknown } ? P : never }[keyof paths]

type Operation<P extends PathFor<M>, M extends Method> = NonNullable<paths[P][M]>

type JsonOf<R> = R extends { content: { 'application/json': infer B } } ? B : never

/** The JSON body of an operation's success answer (the 2xx it documents). */
type SuccessBody<R> = JsonOf<R[Extract<keyof R, 200 | 201 | 202>]>

/** What the envelope of an operation's success answer carries in `data`. */
export type Data<P extends PathFor<M>, M extends Method> = SuccessBody<Operation<P, M>['responses']> extends { data: infer D } ? D : never

/** `meta` of an operation's success answer (lists: `pagination`). */
export type Meta<P extends PathFor<M>, M extends Method> = SuccessBody<Operation<P, M>['responses']> extends { meta: infer D } ? D : never

/** The JSON request body an operation takes. */
export type Body<P extends PathFor<M>, M extends Method> = JsonOf<NonNullable<Operation<P, M>['requestBody']>>

/** The query parameters of an operation, as the document types them. */
export type Params<P extends PathFor<M>, M extends Method> = NonNullable<Operation<P, M>['parameters']['query']>
/** A query value, or the text it is written as in the address ('true', '25'). */
type Written<V> = V | (V extends string | number | boolean ? `${V}` : never)
/** The query parameters an operation reads; null and '' are left out of the address (query.ts), so they are allowed too. */
export type QueryOf<P extends PathFor<M>, M extends Method> = { [K in keyof Params<P, M>]?: Written<Params<P, M>[K]> | null | '' }

/** A documented path with its {parameters} filled in: '/links/{id}' → `/links/${string}`. */
export type Concrete<P extends string> = P extends `${infer Head}{${string}}${infer Tail}` ? `${Head}${string}${Concrete<Tail>}` : P
