// The click timeline: a uPlot canvas (bars of clicks, a line of unique visitors) drawn in the viewer's zone,
// sized by its container and coloured from the stylesheet's variables, so it follows dark mode. A canvas says
// nothing to a screen reader: the container carries a one-sentence summary, and the same figures are a
// table under it.
import { useEffect, useRef } from 'preact/hooks'
import uPlot from 'uplot'
import type { Bucket } from './data'
import { bucketLabel, count, INTERVAL_WORDS, money } from './format'
import type { Interval } from './range'

/** Colours with an alpha for fills; a hex colour gets one appended, anything else is used as it is. */
const withAlpha = (colour: string, alpha: string) => (/^#[0-9a-f]{6}$/i.test(colour) ? colour + alpha : colour)

function palette() {
  const css = getComputedStyle(document.documentElement)
  const read = (name: string, fallback: string) => css.getPropertyValue(name).trim() || fallback
  return { fg: read('--fg', '#1b1f24'), line: read('--line', '#d0d7de'), accent: read('--accent', '#0a58ca'), ok: read('--ok', '#1a7f37') }
}

const HEIGHT = 240
/** Whole numbers only on the count axis. */
const COUNT_STEPS = [1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1_000, 2_000, 2_500, 5_000, 10_000, 25_000, 50_000, 100_000, 250_000, 500_000, 1_000_000]

/** Half a bucket of room at each end, so the first and last bars are drawn whole. */
function xRange(step: number): uPlot.Range.Function {
  return (_u, min, max) => [min - step / 2, max + step / 2]
}

function options(width: number, step: number): uPlot.Options {
  const c = palette()
  const axis = { stroke: c.fg, grid: { stroke: c.line, width: 1 }, ticks: { stroke: c.line, width: 1 } }
  return {
    width,
    height: HEIGHT,
    legend: { show: false },
    cursor: { drag: { x: false, y: false } },
    scales: { x: { time: true, range: xRange(step) }, y: { range: (_u, _min, max) => [0, Math.max(1, max)] } },
    axes: [axis, { ...axis, incrs: COUNT_STEPS, values: (_u, splits) => splits.map(count), size: 56 }],
    series: [
      {},
      {
        label: 'Clicks',
        stroke: c.accent,
        fill: withAlpha(c.accent, '99'),
        width: 1,
        paths: uPlot.paths.bars!({ size: [0.7, 48], align: 0 }),
        points: { show: false },
      },
      { label: 'Unique visitors', stroke: c.ok, width: 2, points: { show: true, size: 5, fill: c.ok } },
    ],
  }
}

function summary(buckets: Bucket[], interval: Interval): string {
  const total = buckets.reduce((sum, b) => sum + b.clicks, 0)
  const per = INTERVAL_WORDS[interval]
  if (!total) return `Chart of clicks per ${per}: no clicks in this range.`
  const best = buckets.reduce((a, b) => (b.clicks > a.clicks ? b : a))
  return (
    `Chart of clicks per ${per}: ${count(total)} ${total === 1 ? 'click' : 'clicks'} in ${buckets.length} ${per}s, the most ` +
    `(${count(best.clicks)}) in ${bucketLabel(best.start, interval)}. The same figures are in the table below.`
  )
}

export function ClickChart({ buckets, interval }: { buckets: Bucket[]; interval: Interval }) {
  const box = useRef<HTMLDivElement>(null)

  useEffect(() => {
    const el = box.current
    if (!el) return
    const data: uPlot.AlignedData = [buckets.map((b) => Date.parse(b.start) / 1000), buckets.map((b) => b.clicks), buckets.map((b) => b.uniqueClicks)]
    const times = data[0]
    const step = times.length > 1 ? times[1]! - times[0]! : 3600
    let chart = new uPlot(options(el.clientWidth, step), data, el)
    const resize = new ResizeObserver(() => {
      if (el.clientWidth && el.clientWidth !== chart.width) chart.setSize({ width: el.clientWidth, height: HEIGHT })
    })
    resize.observe(el)
    // Canvas colours are read once: draw again when the system switches between light and dark.
    const scheme = matchMedia('(prefers-color-scheme: dark)')
    const redraw = () => {
      chart.destroy()
      chart = new uPlot(options(el.clientWidth, step), data, el)
    }
    scheme.addEventListener('change', redraw)
    return () => {
      scheme.removeEventListener('change', redraw)
      resize.disconnect()
      chart.destroy()
    }
  }, [buckets, interval])

  const revenue = buckets.some((b) => Object.keys(b.revenue).length)
  return (
    <>
      <div class="chart-legend" aria-hidden="true">
        <span class="key clicks">Clicks</span>
        <span class="key unique">Unique visitors</span>
      </div>
      <div class="chart" ref={box} role="img" aria-label={summary(buckets, interval)} />
      <details class="chart-table">
        <summary>Show the figures as a table</summary>
        {/* Scrolls on its own (many hours): focusable, so a keyboard can scroll it. */}
        <div class="table-wrap" tabIndex={0} role="region" aria-label={`Clicks per ${INTERVAL_WORDS[interval]}`}>
          <table>
            <caption class="visually-hidden">Clicks, unique visitors and conversions per {INTERVAL_WORDS[interval]}</caption>
            <thead>
              <tr>
                <th scope="col">{INTERVAL_WORDS[interval].replace(/^./, (c) => c.toUpperCase())}</th>
                <th scope="col" class="num">
                  Clicks
                </th>
                <th scope="col" class="num">
                  Unique visitors
                </th>
                <th scope="col" class="num">
                  Conversions
                </th>
                {revenue && (
                  <th scope="col" class="num">
                    Revenue
                  </th>
                )}
              </tr>
            </thead>
            <tbody>
              {buckets.map((b) => (
                <tr data-start={b.start}>
                  <th scope="row">
                    <time dateTime={b.start}>{bucketLabel(b.start, interval)}</time>
                  </th>
                  <td class="num">{count(b.clicks)}</td>
                  <td class="num">{count(b.uniqueClicks)}</td>
                  <td class="num">{count(b.conversions)}</td>
                  {revenue && <td class="num">{money(b.revenue)}</td>}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </details>
    </>
  )
}
