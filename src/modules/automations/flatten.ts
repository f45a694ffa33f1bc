// Zapier's flat naming for samples (`flat=1`): Zapier shows nested fields as `data__link__id`, and an app
// that answers keys already spelled that way lets a Zap map them the same whether the sample was flat or
// not. Pure.

const SEPARATOR = '__'

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/**
 * Nested object keys joined with `__`. Arrays stay arrays (Zapier maps line items from them), their object
 * items flattened the same way. An empty nested object stays `{}` under its own key rather than vanishing,
 * so a field the event always carries (e.g. an empty `metadata`) is still offered for mapping.
 */
export function flatten(value: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  put(out, '', value)
  return out
}

function put(out: Record<string, unknown>, prefix: string, obj: Record<string, unknown>) {
  for (const [key, v] of Object.entries(obj)) {
    const name = prefix ? `${prefix}${SEPARATOR}${key}` : key
    if (isPlainObject(v) && Object.keys(v).length) put(out, name, v)
    else out[name] = leaf(v)
  }
}

function leaf(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(leaf)
  if (isPlainObject(v)) return Object.keys(v).length ? flatten(v) : {}
  return v
}
