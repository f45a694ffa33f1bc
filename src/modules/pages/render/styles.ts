// The one stylesheet of a bridge page, built from its theme. It is the only CSS the page may use (the CSP
// allows it by hash), so it styles the page frame, the section grid and every block class (`b-…`) the
// catalogue's renderers emit. Mobile first: columns stack below 641 px and take their widths above.
import type { Theme, ThemeColors } from '../tree'
import { DEFAULT_THEME, isHexColor } from './theme'

const FONTS: Record<Theme['font'], string> = {
  system: 'system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif',
  serif: 'Georgia,Cambria,"Times New Roman",Times,serif',
  mono: 'ui-monospace,SFMono-Regular,Menlo,Consolas,"Liberation Mono",monospace',
}

const RADII: Record<Theme['buttonShape'], string> = { rounded: '.5rem', pill: '999px', square: '0' }

/** A saved theme passed themeIssues(); anything else (an old row, a bypass) falls back per colour, so no value reaches the CSS unchecked. */
function colors(given: ThemeColors | undefined, fallback: ThemeColors): ThemeColors {
  const pick = (key: keyof ThemeColors) => (isHexColor(given?.[key]) ? given[key].toLowerCase() : fallback[key])
  return { background: pick('background'), text: pick('text'), accent: pick('accent'), accentText: pick('accentText') }
}

const vars = (c: ThemeColors, scheme: 'light' | 'dark') => `color-scheme:${scheme};--bg:${c.background};--fg:${c.text};--ac:${c.accent};--on:${c.accentText}`

// Every link and button is at least 44 px tall (WCAG 2.5.5); links inside running text get the height from
// vertical padding so the line spacing stays that of text.
const FRAME = `*,*::before,*::after{box-sizing:border-box}
html{-webkit-text-size-adjust:100%;text-size-adjust:100%}
body{margin:0;background:var(--bg);color:var(--fg);font:1rem/1.55 var(--font);overflow-wrap:anywhere}
a{color:var(--ac);text-underline-offset:.15em}
img,iframe{max-width:100%;display:block}
h1,h2,h3,p,ul,figure{margin:0}
:focus-visible{outline:3px solid var(--ac);outline-offset:3px}
.skip{position:absolute;left:.5rem;top:.5rem;z-index:2;display:inline-flex;align-items:center;min-height:44px;padding:0 1rem;background:var(--ac);
color:var(--on);border-radius:var(--r);transform:translateY(-150%)}
.skip:focus{transform:none}
.test-banner{background:var(--fg);color:var(--bg);text-align:center;font-weight:700;padding:.75rem 1rem}
main{max-width:64rem;margin:0 auto;padding:2rem 1rem 3rem}
main:focus{outline:none}
.page-title{font-size:1.75rem;line-height:1.2;text-align:center;margin:0 0 1.5rem}
.s{display:grid;grid-template-columns:repeat(12,minmax(0,1fr));gap:1.5rem;margin:0 0 1.5rem}
.s-full>.c{max-width:40rem;width:100%;margin:0 auto}
.c{grid-column:span 12;display:flex;flex-direction:column;gap:1rem;min-width:0}
@media (min-width:641px){${Array.from({ length: 11 }, (_, i) => `.w-${i + 1}{grid-column:span ${i + 1}}`).join('')}}
h1,h2,h3{line-height:1.25}
h2{font-size:1.4rem}h3{font-size:1.15rem}
`

const BLOCKS = `.b-profile{text-align:center;display:flex;flex-direction:column;align-items:center;gap:.5rem}
.b-profile-avatar{width:6rem;height:6rem;border-radius:50%;object-fit:cover}
.b-profile-name{font-size:1.75rem}
.b-heading{text-align:center}
.b-text>*+*{margin-top:.75rem}
.b-text-list{padding-left:1.25rem}
.b-text-link{padding:14px 0}
.b-button,.b-social-link,.b-contact-save{display:flex;align-items:center;justify-content:center;gap:.5rem;min-height:48px;padding:.6rem 1.25rem;
border:2px solid var(--ac);border-radius:var(--r);font-weight:600;text-align:center;text-decoration:none;background:transparent;color:var(--ac)}
.b-button-filled,.b-contact-save{background:var(--ac);color:var(--on)}
.b-button:hover,.b-social-link:hover,.b-contact-save:hover{text-decoration:underline}
.b-button-disabled{color:var(--fg);border-color:currentColor;border-style:dashed}
.b-social{list-style:none;padding:0;display:flex;flex-wrap:wrap;justify-content:center;gap:.5rem}
.b-social-link{min-width:44px;padding:.5rem 1rem}
.b-image-link{display:block;min-height:44px}
.b-image-img{width:100%;height:auto;border-radius:var(--r)}
.b-image-caption{margin-top:.5rem;text-align:center;font-size:.95rem}
.b-video{display:flex;flex-direction:column;gap:.25rem}
.b-video-frame{width:100%;border:0;border-radius:var(--r)}
.b-video-wide .b-video-frame{height:auto;aspect-ratio:16/9}
.b-video-link,.b-contact-link{display:inline-flex;align-items:center;min-height:44px}
.b-divider{border:0;border-top:2px solid var(--fg);opacity:.35;width:100%;margin:.5rem 0}
.b-divider-dots{border-top-style:dotted;border-top-width:4px}
.b-spacer-small{height:.5rem}.b-spacer-medium{height:1.5rem}.b-spacer-large{height:3.5rem}
.b-contact{display:flex;flex-direction:column;gap:.25rem}
.b-contact-name{font-size:1.25rem;font-weight:700}
.b-contact-details{list-style:none;padding:0;margin:.25rem 0 .75rem}
.b-contact-label{font-weight:600}
`

/** The page's stylesheet: the theme as custom properties (light, then a dark override), the frame and the blocks. */
export function pageStylesheet(theme: Theme): string {
  const light = colors(theme?.light, DEFAULT_THEME.light)
  const dark = colors(theme?.dark, DEFAULT_THEME.dark)
  const font = FONTS[theme?.font] ?? FONTS.system
  const radius = RADII[theme?.buttonShape] ?? RADII.rounded
  return `:root{${vars(light, 'light')};--font:${font};--r:${radius}}
@media (prefers-color-scheme:dark){:root{${vars(dark, 'dark')}}}
${FRAME}${BLOCKS}`
}
