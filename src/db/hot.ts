// Statements of SQLite's hottest paths outside transaction bodies (the redirect's link read on a cache miss,
// bulk link inserts, the click flush): built with drizzle's query builder like every other statement,
// compiled once as the engine's prepared statements are (engine/prepared.ts) and run straight on the
// driver, rows as the driver gives them. The code is SQLite's seam's (engine/sqlite.ts).
export { hotStatement, type HotStatement } from './engine/sqlite'
