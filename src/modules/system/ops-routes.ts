// Operations endpoints outside /v1: liveness, readiness and Prometheus metrics.
import { Elysia, t } from 'elysia'
import { pingStore } from '../../db/store'
import type { Platform } from '../module'

export function opsRoutes(rt: Pick<Platform, 'instanceId' | 'store' | 'metrics'>) {
  return new Elysia({ name: 'lnk.ops', seed: rt.instanceId, tags: ['Operations'] })
    .get('/healthz', () => ({ status: 'ok' as const }), {
      response: { 200: t.Object({ status: t.Literal('ok') }) },
      detail: { summary: 'Liveness', description: 'Answers while the process runs.', security: [] },
    })
    .get(
      '/readyz',
      async ({ set }) => {
        try {
          await pingStore(rt.store)
          return { status: 'ready' as const }
        } catch (err) {
          set.status = 503
          return { status: 'unavailable' as const, error: (err as Error).message }
        }
      },
      {
        response: { 200: t.Object({ status: t.Literal('ready') }), 503: t.Object({ status: t.Literal('unavailable'), error: t.String() }) },
        detail: { summary: 'Readiness', description: 'Answers 200 when the database answers, 503 otherwise.', security: [] },
      },
    )
    .get(
      '/metrics',
      async ({ set }) => {
        set.headers['content-type'] = 'text/plain; version=0.0.4; charset=utf-8'
        return rt.metrics.render()
      },
      {
        response: { 200: t.String({ description: 'Prometheus text exposition format' }) },
        detail: { summary: 'Prometheus metrics', security: [] },
      },
    )
}
