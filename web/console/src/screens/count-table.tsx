// The table the tag and folder screens share: one row per item with its link count, and an actions column
// for keys that may change them.
import type { ComponentChildren } from 'preact'

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
