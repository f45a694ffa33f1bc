// A link's QR code: a preview and downloads as PNG, SVG or PDF at a chosen size. Both come from
// GET /v1/qr/{linkId} with the key (an <img src> cannot send it), handed to the page as object URLs.
import { useEffect, useState } from 'preact/hooks'
import { api, explain } from '../../api'
import { useAction, useAsync } from '../../ui/async'
import { SelectField } from '../../ui/form'
import { Loaded } from '../../ui/states'
import type { Link } from './model'

const SIZES = ['256', '512', '1024', '2048', '4096'].map((s) => ({ value: s, label: `${s} × ${s}` }))
const FORMATS = [
  ['png', 'PNG'],
  ['svg', 'SVG'],
  ['pdf', 'PDF'],
] as const

/** An object URL for a blob, revoked when the blob changes or the component goes. */
function useObjectUrl(blob: Blob | undefined): string | undefined {
  const [url, setUrl] = useState<string>()
  useEffect(() => {
    if (!blob) return
    const made = URL.createObjectURL(blob)
    setUrl(made)
    return () => URL.revokeObjectURL(made)
  }, [blob])
  return url
}

export function QrPanel({ link }: { link: Link }) {
  const [size, setSize] = useState('512')
  // The preview is the SVG: the same code at any size, so it does not follow the size chooser.
  const preview = useAsync(() => api.blob<'/qr/{linkId}'>(`/qr/${encodeURIComponent(link.id)}`, { format: 'svg', size: 512 }), [link.id, link.shortUrl])
  const src = useObjectUrl(preview.data)
  const download = useAction(async (format: (typeof FORMATS)[number][0]) => {
    // The size is one of SIZES, all whole numbers.
    const blob = await api.blob<'/qr/{linkId}'>(`/qr/${encodeURIComponent(link.id)}`, { format, size: size as `${number}` })
    const url = URL.createObjectURL(blob)
    const a = document.createElement('a')
    a.href = url
    a.download = `${link.slug}-qr-${size}.${format}`
    document.body.append(a)
    a.click()
    a.remove()
    // The browser reads the URL when the download starts; give it a moment before letting go of the blob.
    setTimeout(() => URL.revokeObjectURL(url), 10_000)
  })
  return (
    <section class="panel qr-panel" aria-labelledby="qr-heading">
      <h2 id="qr-heading">QR code</h2>
      <div class="qr-body">
        <Loaded state={preview} label="Drawing the QR code…">
          {() => (src ? <img class="qr-preview" src={src} width={192} height={192} alt={`QR code for ${link.shortUrl}`} /> : null)}
        </Loaded>
        <div>
          <SelectField label="QR size (pixels or points)" value={size} onValue={setSize} options={SIZES} />
          <div class="actions">
            {FORMATS.map(([format, name]) => (
              <button type="button" class="secondary" disabled={download.busy} onClick={() => download.run(format)}>
                Download {name}
              </button>
            ))}
          </div>
          {download.error != null && (
            <p class="field-error" role="alert">
              {explain(download.error)}
            </p>
          )}
        </div>
      </div>
    </section>
  )
}
