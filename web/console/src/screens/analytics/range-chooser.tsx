// The range buttons (24 hours … 12 months) and the custom from/to dates. The chosen range lives in the hash
// query, so choosing one is a navigation and the back button goes to the previous range.
import { useState } from 'preact/hooks'
import { navigate } from '../../router'
import { TextField } from '../../ui/form'
import { customProblem, localDate, PRESETS, rangeQuery, START_MISSING, type Range } from './range'

export function RangeChooser({ path, range, keep }: { path: string; range: Range; keep?: Record<string, string | undefined> }) {
  const [custom, setCustom] = useState(range.preset === 'custom')
  const [from, setFrom] = useState(range.from ?? localDate(new Date(Date.now() - 6 * 86_400_000)))
  const [to, setTo] = useState(range.to ?? localDate(new Date()))
  const [problem, setProblem] = useState<string | null>(null)

  const choose = (next: Range) => navigate(path, rangeQuery(next, keep))
  const apply = (e: Event) => {
    e.preventDefault()
    const why = customProblem(from, to)
    setProblem(why)
    if (!why) choose({ preset: 'custom', from, to })
  }

  return (
    <div class="range-chooser">
      <div class="range-buttons" role="group" aria-label="Range">
        {PRESETS.map((p) => {
          const pressed = p.value === 'custom' ? custom : !custom && range.preset === p.value
          return (
            <button
              type="button"
              class="secondary small"
              aria-pressed={pressed}
              onClick={() => (p.value === 'custom' ? setCustom(true) : (setCustom(false), choose({ preset: p.value })))}
            >
              {p.label}
            </button>
          )
        })}
      </div>
      {custom && (
        <form class="toolbar custom-range" onSubmit={apply} aria-label="Custom range" noValidate>
          <TextField label="From" type="date" value={from} onValue={setFrom} max={to} error={problem === START_MISSING ? problem : null} />
          <TextField label="To" type="date" value={to} onValue={setTo} min={from} error={problem && problem !== START_MISSING ? problem : null} />
          <button type="submit">Show range</button>
        </form>
      )}
    </div>
  )
}
