// Bulk create: pasted lines or a CSV file read in the browser (FileReader; nothing is uploaded but the
// API calls), sent in chunks to POST /v1/links/bulk with a progress bar and each row's outcome.
import { useRef, useState } from 'preact/hooks'
import { api, explain } from '../../api'
import { href } from '../../router'
import { useSession } from '../../session'
import { announce } from '../../ui/announce'
import { Field } from '../../ui/form'
import type { ScreenProps } from '../types'
import { parseBulk, type Row } from './bulk-parse'
import { TextArea } from './fields'
import type { Link } from './model'

/** The API takes at most 1000 per call; smaller chunks let the bar move on big pastes. */
const CHUNK = 200

interface Outcome {
  row: Row
  link?: Link
  error?: string
}

const readFile = (file: File) =>
  new Promise<string>((resolve, reject) => {
    const reader = new FileReader()
    reader.onload = () => resolve(String(reader.result ?? ''))
    reader.onerror = () => reject(new Error(`The file ${file.name} could not be read.`))
    reader.readAsText(file)
  })

export function BulkCreate(_: ScreenProps) {
  const { can } = useSession()
  const [text, setText] = useState('')
  const [fileError, setFileError] = useState('')
  const [progress, setProgress] = useState<{ done: number; total: number } | null>(null)
  const [outcomes, setOutcomes] = useState<Outcome[]>([])
  const [error, setError] = useState<string>('')
  const [busy, setBusy] = useState(false)
  const rows = parseBulk(text)
  const progressHeading = useRef<HTMLHeadingElement>(null)

  const pick = async (input: HTMLInputElement) => {
    const file = input.files?.[0]
    if (!file) return
    setFileError('')
    try {
      setText(await readFile(file))
    } catch (err) {
      setFileError(explain(err))
    }
  }

  const run = async () => {
    if (!rows.length) return setError('Paste at least one destination, or choose a CSV file.')
    setBusy(true)
    setError('')
    setOutcomes([])
    setProgress({ done: 0, total: rows.length })
    // Where the outcome will appear: a person (and a screen reader) follows along there.
    requestAnimationFrame(() => progressHeading.current?.focus())
    const all: Outcome[] = []
    try {
      for (let start = 0; start < rows.length; start += CHUNK) {
        const chunk = rows.slice(start, start + CHUNK)
        const answer = await api.post<'/links/bulk'>('/links/bulk', { links: chunk.map((r) => r.body) })
        // One result per input, in order; a failed one always carries its error.
        chunk.forEach((row, i) => {
          const result = answer.results[i]
          all.push(!result ? { row, error: 'No answer for this row' } : result.ok ? { row, link: result.link } : { row, error: result.error!.message })
        })
        setOutcomes([...all])
        setProgress({ done: start + chunk.length, total: rows.length })
      }
      const failed = all.filter((o) => o.error).length
      announce(`${all.length - failed} links created, ${failed} failed`)
    } catch (err) {
      setError(`Stopped after ${all.length} of ${rows.length} rows: ${explain(err)}`)
    } finally {
      setBusy(false)
    }
  }

  const created = outcomes.filter((o) => o.link).length
  return (
    <>
      <h1 tabIndex={-1}>Bulk create links</h1>
      <p>
        <a href={href('/links')}>Back to links</a>
      </p>
      {!can('links:write') ? (
        <p class="state error">This API key can only read links. Sign in with a key that has links:write to create them.</p>
      ) : (
        <form
          noValidate
          onSubmit={(e) => {
            e.preventDefault()
            if (!busy) void run()
          }}
        >
          <TextArea
            label="Links, one per line"
            rows={8}
            value={text}
            onValue={setText}
            hint='One destination per line, or "destination,slug"; or CSV with a header row such as destinationUrl,slug,title,tags (tags separated by ;).'
          />
          <Field label="Or read a CSV file" hint="Read here in the browser; it replaces the text above." error={fileError || null}>
            {({ id, describedBy }) => (
              <input id={id} type="file" accept=".csv,text/csv,text/plain" aria-describedby={describedBy} onChange={(e) => void pick(e.currentTarget)} />
            )}
          </Field>
          <div class="actions">
            <button type="submit" disabled={busy}>
              Create {rows.length === 1 ? '1 link' : `${rows.length} links`}
            </button>
          </div>
          {error && (
            <p class="field-error" role="alert">
              {error}
            </p>
          )}
        </form>
      )}
      {progress && (
        <section aria-labelledby="bulk-progress">
          <h2 id="bulk-progress" tabIndex={-1} ref={progressHeading}>
            Progress
          </h2>
          <progress class="progress" max={progress.total} value={progress.done} aria-label="Rows sent">
            {progress.done} of {progress.total}
          </progress>
          <p role="status">
            {progress.done} of {progress.total} rows sent: {created} created, {outcomes.length - created} failed.
          </p>
        </section>
      )}
      {outcomes.length > 0 && (
        <div class="table-wrap">
          <table>
            <caption class="visually-hidden">Result of each row</caption>
            <thead>
              <tr>
                <th scope="col">Line</th>
                <th scope="col">Destination</th>
                <th scope="col">Result</th>
              </tr>
            </thead>
            <tbody>
              {outcomes.map((o) => (
                <tr class={o.error ? 'failed' : undefined}>
                  <td class="num">{o.row.line}</td>
                  <td class="destination">{String(o.row.body.destinationUrl ?? '')}</td>
                  <td>
                    {o.link ? (
                      <a href={href(`/links/${encodeURIComponent(o.link.id)}`)}>{o.link.shortUrl}</a>
                    ) : (
                      <span class="bulk-error">
                        <span class="badge bad">Failed</span> {o.error}
                      </span>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  )
}
