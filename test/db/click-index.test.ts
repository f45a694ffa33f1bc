// The raw clicks of a partial hour are read for their visitors and counts (analytics: top links with an
// end inside a busy hour). Those reads must stay index-only: through the table they cost a random page per
// click, which is what made the question take seconds at a million clicks in the hour.
import { afterAll, expect, test } from 'bun:test'
import { join } from 'node:path'
import { openDatabase } from '../../src/db/client'
import { migrate } from '../../src/db/migrate'
import { tempDir } from '../helpers'

const handle = openDatabase(join(tempDir(), 'lnk.db'))
migrate(handle.sqlite)
afterAll(() => handle.close())

const plan = (sql: string, ...params: (string | number)[]) =>
  (handle.sqlite.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as { detail: string }[]).map((p) => p.detail).join('\n')

test("a partial hour's visitors per link are read from the click index alone", () => {
  const detail = plan('SELECT visitor_hash FROM clicks WHERE link_id = ? AND clicked_at >= ? AND clicked_at < ? AND is_bot = 0', 'a', 0, 1)
  expect(detail).toContain('USING COVERING INDEX clicks_link_time_idx')
})

test("a partial hour's people's clicks per link are counted from the click index alone", () => {
  const detail = plan('SELECT COUNT(*) FROM clicks WHERE link_id = ? AND clicked_at >= ? AND clicked_at < ? AND is_bot = 0', 'a', 0, 1)
  expect(detail).toContain('USING COVERING INDEX clicks_link_time_idx')
})
