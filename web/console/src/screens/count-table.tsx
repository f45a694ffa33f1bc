// The table the tag and folder screens share: one row per item with its link count, an actions column for
// keys that may change them, and the row an item turns into while it is edited.
import type { ComponentChildren } from 'preact'

/** Focus the first field of an edit form as it opens, unless focus is already inside it. */
const focusFirst = (form: HTMLFormElement | null) => void (form && !form.contains(document.activeElement) && form.querySelector('input')?.focus())

export function CountTable({ noun, canWrite, children }: { noun: string; canWrite: boolean; children: ComponentChildren }) {
  return (
    <div class="table-wrap">
      <table class="org-table">
        <thead>
          <tr>
            <th scope="col">{noun}</th>
            <th scope="col" class="num">
              Links
            </th>
            {canWrite && (
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            )}
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </div>
  )
}

/** An item's row while it is edited: its fields, then Save and Cancel. */
export function EditRow(props: { label: string; noun: string; busy: boolean; onSave: () => void; onCancel: () => void; children: ComponentChildren }) {
  return (
    <tr>
      <td colSpan={3}>
        <form
          ref={focusFirst}
          class="row-form"
          aria-label={props.label}
          onSubmit={(e) => {
            e.preventDefault()
            props.onSave()
          }}
        >
          {props.children}
          <div class="org-actions">
            <button type="submit" disabled={props.busy}>
              {props.busy ? 'Saving…' : `Save ${props.noun}`}
            </button>
            <button type="button" class="secondary" onClick={props.onCancel}>
              Cancel
            </button>
          </div>
        </form>
      </td>
    </tr>
  )
}
