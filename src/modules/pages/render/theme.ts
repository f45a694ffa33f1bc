// Page themes and the colour rules a theme must pass before it is saved (WCAG 2.2 level AA), in the light
// and the dark scheme alike, since a visitor's system decides which one they see:
//   - text on background ≥ 4.5:1: body text and headings (1.4.3);
//   - accentText on accent ≥ 4.5:1: the label of a filled button (1.4.3);
//   - accent on background ≥ 4.5:1: the renderer draws links in text, outline buttons and their labels in
//     the accent colour on the page background, so the accent is text there (1.4.3); this also covers the
//     3:1 the focus ring and button outlines need as non-text contrast (1.4.11).
// Colours are `#rrggbb` only: one spelling, so the stylesheet and its CSP hash are predictable and a value
// can never smuggle CSS.
import type { FieldIssue } from '../blocks/types'
import type { Theme, ThemeColors } from '../tree'

export const DEFAULT_THEME: Theme = {
  light: { background: '#ffffff', text: '#1f1f1f', accent: '#0b57d0', accentText: '#ffffff' },
  dark: { background: '#121212', text: '#ececec', accent: '#8ab4f8', accentText: '#0b1d3a' },
  font: 'system',
  buttonShape: 'rounded',
}

export const TEXT_CONTRAST = 4.5

const HEX = /^#[0-9a-f]{6}$/i

export const isHexColor = (value: unknown): value is string => typeof value === 'string' && HEX.test(value)

/** WCAG relative luminance of a `#rrggbb` colour. */
function luminance(hex: string): number {
  const channel = (i: number) => {
    const s = Number.parseInt(hex.slice(i, i + 2), 16) / 255
    return s <= 0.04045 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4
  }
  return 0.2126 * channel(1) + 0.7152 * channel(3) + 0.0722 * channel(5)
}

/** The WCAG contrast ratio of two `#rrggbb` colours, from 1 to 21. */
export function contrastRatio(a: string, b: string): number {
  const [x, y] = [luminance(a), luminance(b)]
  return (Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05)
}

const PAIRS: { fg: keyof ThemeColors; bg: keyof ThemeColors; what: string }[] = [
  { fg: 'text', bg: 'background', what: 'text on the background' },
  { fg: 'accentText', bg: 'accent', what: 'button labels on the accent' },
  { fg: 'accent', bg: 'background', what: 'links and outline buttons (accent on the background)' },
]

const FONTS = ['system', 'serif', 'mono']
const SHAPES = ['rounded', 'pill', 'square']

/** Everything wrong with a theme, with paths like `theme/dark/accent`; empty when it may be saved. */
export function themeIssues(theme: Theme): FieldIssue[] {
  const issues: FieldIssue[] = []
  for (const scheme of ['light', 'dark'] as const) {
    const colors = theme?.[scheme]
    if (!colors || typeof colors !== 'object') {
      issues.push({ path: `theme/${scheme}`, message: 'must be an object with background, text, accent and accentText' })
      continue
    }
    const bad = new Set<string>()
    for (const key of ['background', 'text', 'accent', 'accentText'] as const) {
      if (!isHexColor(colors[key])) {
        bad.add(key)
        issues.push({ path: `theme/${scheme}/${key}`, message: 'must be a colour written as #rrggbb' })
      }
    }
    for (const { fg, bg, what } of PAIRS) {
      if (bad.has(fg) || bad.has(bg)) continue
      const ratio = contrastRatio(colors[fg], colors[bg])
      if (ratio < TEXT_CONTRAST) {
        issues.push({
          path: `theme/${scheme}/${fg}`,
          message: `contrast of ${what} is ${ratio.toFixed(2)}:1 in the ${scheme} scheme; WCAG AA needs at least ${TEXT_CONTRAST}:1`,
        })
      }
    }
  }
  if (!FONTS.includes(theme?.font)) issues.push({ path: 'theme/font', message: `must be one of ${FONTS.join(', ')}` })
  if (!SHAPES.includes(theme?.buttonShape)) issues.push({ path: 'theme/buttonShape', message: `must be one of ${SHAPES.join(', ')}` })
  return issues
}
