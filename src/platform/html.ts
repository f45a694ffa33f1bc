// Small, self-contained HTML pages for visitors: no external assets, escaped output, readable on phones.
export function escapeHtml(value: unknown): string {
  return String(value ?? '').replace(/[&<>"'`]/g, (c) => `&#${c.charCodeAt(0)};`)
}

/** Escapes a value for a JSON literal inside a <script> element. */
export function scriptJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/>/g, '\\u003e')
    .replace(/&/g, '\\u0026')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029')
}

const STYLE = `
:root{color-scheme:light dark;--fg:#1a1a1a;--bg:#fafafa;--muted:#5c5c5c;--accent:#0b57d0;--on-accent:#fff;--card:#fff;--border:#d9d9d9}
@media (prefers-color-scheme:dark){:root{--fg:#ececec;--bg:#121212;--muted:#a8a8a8;--accent:#8ab4f8;--on-accent:#0b1d3a;--card:#1e1e1e;--border:#3a3a3a}}
*{box-sizing:border-box}body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg);
display:flex;min-height:100vh;align-items:center;justify-content:center;padding:1rem}
main{background:var(--card);border:1px solid var(--border);border-radius:12px;padding:1.5rem;max-width:32rem;width:100%}
h1{font-size:1.35rem;margin:0 0 .75rem}p{margin:.5rem 0}.muted{color:var(--muted);font-size:.9rem}
.dest{word-break:break-all;font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.9rem;background:var(--bg);border:1px solid var(--border);
border-radius:6px;padding:.5rem}
label{display:block;margin:.75rem 0 .25rem;font-weight:600}input[type=password]{width:100%;padding:.6rem;font-size:1rem;
border:1px solid var(--border);border-radius:6px;background:var(--bg);color:var(--fg)}
.actions{display:flex;gap:.75rem;flex-wrap:wrap;margin-top:1rem}
button,.button{display:inline-block;padding:.6rem 1.1rem;font-size:1rem;border-radius:6px;border:1px solid var(--accent);background:var(--accent);
color:var(--on-accent);text-decoration:none;cursor:pointer}
.secondary{background:transparent;color:var(--accent)}.error{color:#b3261e;font-weight:600}
@media (prefers-color-scheme:dark){.error{color:#f2b8b5}}
:focus-visible{outline:3px solid var(--accent);outline-offset:2px}`

export interface PageOptions {
  title: string
  body: string
  status?: number
  head?: string
  /** Inline script allowed by the page's Content-Security-Policy. */
  script?: string
  headers?: Record<string, string>
}

// form-action also governs the redirects that follow a form POST (Chromium enforces it along the whole
// chain), and a passed gate (password, captcha, consent) ends at the link's destination, on any host. So
// the gate forms may lead to http(s) anywhere; other schemes (javascript:, data:) stay blocked.
const FORM_ACTION = "form-action 'self' http: https:"

export function htmlPage(o: PageOptions): Response {
  const script = o.script ? `<script>${o.script}</script>` : ''
  const html =
    '<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">' +
    `<meta name="robots" content="noindex,nofollow"><title>${escapeHtml(o.title)}</title>${o.head ?? ''}<style>${STYLE}</style></head>` +
    `<body><main>${o.body}</main>${script}</body></html>`
  return new Response(html, {
    status: o.status ?? 200,
    headers: {
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'no-store',
      'x-robots-tag': 'noindex',
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
      'content-security-policy':
        `default-src 'none'; style-src 'unsafe-inline'; img-src data:; ${FORM_ACTION}; base-uri 'none'; frame-ancestors 'none'` +
        (o.script ? "; script-src 'unsafe-inline'; connect-src 'none'" : ''),
      ...o.headers,
    },
  })
}
