// Payload templates (`transform: {kind: "template", template}`): a JSON object whose strings may carry
// `{{ path }}` placeholders, dot paths into the event envelope (`{{ data.link.shortUrl }}`, `{{ data.tags.0 }}`).
// Rendering only copies values; no expression language and no user code runs.
// - A string that is exactly one placeholder becomes the value itself, type kept (a number stays a number,
//   an object stays an object); a missing value becomes null.
// - In any other string each placeholder is replaced by text: strings as they are, numbers and booleans
//   printed, objects and arrays as JSON, null and missing values as the empty string.
// - Keys are never templated, and only own properties are read (see readPath).
import { readPath, type Issue } from './filters'

export const MAX_TEMPLATE_DEPTH = 10
export const MAX_TEMPLATE_BYTES = 16 * 1024
const MAX_PATH_LENGTH = 200

const SEGMENT = '[A-Za-z0-9_$-]+'
const PLACEHOLDER = new RegExp(`\\{\\{\\s*(${SEGMENT}(?:\\.${SEGMENT})*)\\s*\\}\\}`, 'g')
const WHOLE = new RegExp(`^\\{\\{\\s*(${SEGMENT}(?:\\.${SEGMENT})*)\\s*\\}\\}$`)

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && (Object.getPrototypeOf(v) === Object.prototype || Object.getPrototypeOf(v) === null)

const pointer = (base: string, key: string | number) => `${base}/${String(key).replace(/~/g, '~0').replace(/\//g, '~1')}`

/** Problems with the placeholders of one string: every `{{` must open a well-formed placeholder. */
function placeholderIssue(text: string): string | null {
  const rest = text.replace(PLACEHOLDER, (whole, path: string) => (path.length > MAX_PATH_LENGTH ? '\u0000' : ''))
  if (rest.includes('\u0000')) return `placeholder paths are at most ${MAX_PATH_LENGTH} characters`
  if (rest.includes('{{')) return 'has a malformed placeholder; write {{ path.to.value }} with letters, digits, _ - $ and dots'
  return null
}

function walkIssues(value: unknown, path: string, depth: number, issues: Issue[]): void {
  if (typeof value === 'string') {
    const problem = placeholderIssue(value)
    if (problem) issues.push({ path, message: problem })
    return
  }
  if (value === null || typeof value === 'boolean') return
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) issues.push({ path, message: 'must be a finite number' })
    return
  }
  const container = Array.isArray(value) || isPlainObject(value)
  if (!container) return void issues.push({ path, message: 'must be a JSON value' })
  if (depth > MAX_TEMPLATE_DEPTH) return void issues.push({ path, message: `nests deeper than ${MAX_TEMPLATE_DEPTH} levels` })
  if (Array.isArray(value)) value.forEach((item, i) => walkIssues(item, pointer(path, i), depth + 1, issues))
  else for (const [k, v] of Object.entries(value)) walkIssues(v, pointer(path, k), depth + 1, issues)
}

/** Issues with a template from a request body; paths are JSON pointers rooted at /transform/template. */
export function validateTemplate(template: unknown): Issue[] {
  const base = '/transform/template'
  if (!isPlainObject(template)) return [{ path: base, message: 'must be a JSON object' }]
  const issues: Issue[] = []
  walkIssues(template, base, 1, issues)
  if (issues.length) return issues
  const bytes = Buffer.byteLength(JSON.stringify(template))
  if (bytes > MAX_TEMPLATE_BYTES) issues.push({ path: base, message: `is ${bytes} bytes as JSON; at most ${MAX_TEMPLATE_BYTES}` })
  return issues
}

function asText(value: unknown): string {
  if (value === undefined || value === null) return ''
  if (typeof value === 'string') return value
  if (typeof value === 'object') return JSON.stringify(value)
  return String(value)
}

function renderString(text: string, source: unknown): unknown {
  const whole = WHOLE.exec(text)
  if (whole) {
    const { found, value } = readPath(source, whole[1]!)
    return found ? value : null
  }
  return text.replace(PLACEHOLDER, (_, path: string) => asText(readPath(source, path).value))
}

function render(node: unknown, source: unknown): unknown {
  if (typeof node === 'string') return renderString(node, source)
  if (Array.isArray(node)) return node.map((item) => render(item, source))
  // fromEntries defines own properties, so a key such as "__proto__" stays a key and never a prototype.
  if (isPlainObject(node)) return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, render(v, source)]))
  return node
}

export function renderTemplate(template: Record<string, unknown>, source: unknown): unknown {
  return render(template, source)
}
