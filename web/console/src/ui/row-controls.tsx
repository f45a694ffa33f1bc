// Move up, move down and remove for one row of an ordered list, as plain buttons (reachable and usable by
// keyboard, unlike dragging). After a move the focus follows the row to its new place, on the same button when
// it can still move that way, else on the other; the new position is announced.
import { useId } from 'preact/hooks'
import { announce } from './announce'

export function RowControls({
  index,
  count,
  noun,
  onMove,
  onRemove,
}: {
  index: number
  count: number
  /** What the row is called, with its number: "rule 2". */
  noun: string
  /** Absent for lists whose order means nothing. */
  onMove?: (by: -1 | 1) => void
  onRemove: () => void
}) {
  const id = useId()
  const move = (by: -1 | 1) => {
    onMove?.(by)
    const position = index + by + 1
    announce(`Moved to position ${position} of ${count}`)
    // The row re-renders at its new place with the same ids; focus the button that can still act.
    const canAgain = by === -1 ? position > 1 : position < count
    requestAnimationFrame(() => document.getElementById(`${id}-${canAgain === (by === -1) ? 'up' : 'down'}`)?.focus())
  }
  const hidden = <span class="visually-hidden"> {noun}</span>
  return (
    <div class="row-controls">
      {onMove && (
        <>
          <button type="button" id={`${id}-up`} class="secondary small" disabled={index === 0} onClick={() => move(-1)}>
            Move up{hidden}
          </button>
          <button type="button" id={`${id}-down`} class="secondary small" disabled={index === count - 1} onClick={() => move(1)}>
            Move down{hidden}
          </button>
        </>
      )}
      <button type="button" class="danger small" onClick={onRemove}>
        Remove{hidden}
      </button>
    </div>
  )
}
