// Previous/next paging for lists that answer meta.pagination (page, perPage, total, totalPages).
export function Pager({
  page,
  totalPages,
  total,
  onPage,
  label = 'Pages',
}: {
  page: number
  totalPages: number
  total: number
  onPage: (page: number) => void
  label?: string
}) {
  if (totalPages <= 1) return <p class="hint">{total === 1 ? '1 item' : `${total} items`}</p>
  return (
    <nav class="actions" aria-label={label}>
      <button type="button" class="secondary small" disabled={page <= 1} onClick={() => onPage(page - 1)}>
        Previous
      </button>
      <span>
        Page {page} of {totalPages} ({total} items)
      </span>
      <button type="button" class="secondary small" disabled={page >= totalPages} onClick={() => onPage(page + 1)}>
        Next
      </button>
    </nav>
  )
}
