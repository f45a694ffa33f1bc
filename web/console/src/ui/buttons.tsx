// Buttons that do more than click: copy to the clipboard, and ask before destroying.
import type { ComponentChildren } from 'preact'
import { useEffect, useRef, useState } from 'preact/hooks'
import { explain } from '../api'
import { announce } from './announce'

export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
  const [copied, setCopied] = useState(false)
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text)
      setCopied(true)
      announce('Copied to the clipboard')
      setTimeout(() => setCopied(false), 1500)
    } catch {
      announce('The browser did not allow copying; select the text and copy it by hand.')
    }
  }
  return (
    <button type="button" class="secondary small" onClick={copy} aria-label={`${label}: ${text}`}>
      {copied ? 'Copied' : label}
    </button>
  )
}

/**
 * A button that opens a confirmation dialog (a native <dialog>: focus moves into it and Escape closes it)
 * and runs `onConfirm` only when the person confirms.
 */
export function ConfirmButton({
  label,
  title,
  children,
  confirmLabel,
  onConfirm,
  danger = true,
}: {
  label: string
  title: string
  children: ComponentChildren
  confirmLabel: string
  onConfirm: () => Promise<unknown> | void
  danger?: boolean
}) {
  const dialog = useRef<HTMLDialogElement>(null)
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<unknown>(null)
  useEffect(() => () => dialog.current?.close(), [])
  const confirm = async () => {
    setBusy(true)
    setError(null)
    try {
      await onConfirm()
      dialog.current?.close()
    } catch (err) {
      // Stays open with the reason, so the person can retry or cancel knowing what happened.
      setError(err)
    } finally {
      setBusy(false)
    }
  }
  return (
    <>
      <button type="button" class={danger ? 'danger small' : 'secondary small'} onClick={() => dialog.current?.showModal()}>
        {label}
      </button>
      <dialog ref={dialog} aria-label={title}>
        <h2>{title}</h2>
        <div>{children}</div>
        {error !== null && (
          <p class="field-error" role="alert">
            {explain(error)}
          </p>
        )}
        <div class="actions">
          <button type="button" class="secondary" onClick={() => dialog.current?.close()}>
            Cancel
          </button>
          <button type="button" class={danger ? 'danger' : ''} disabled={busy} onClick={confirm}>
            {confirmLabel}
          </button>
        </div>
      </dialog>
    </>
  )
}
