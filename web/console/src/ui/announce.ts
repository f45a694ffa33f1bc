// One polite live region for short confirmations ("Copied", "Link deleted"), read by screen readers and
// shown briefly on screen.
let region: HTMLElement | null = null
let timer: ReturnType<typeof setTimeout> | undefined

export function announce(message: string) {
  if (!region) {
    region = document.createElement('div')
    region.className = 'toast'
    region.setAttribute('role', 'status')
    region.setAttribute('aria-live', 'polite')
    document.body.append(region)
  }
  region.textContent = message
  region.classList.add('shown')
  clearTimeout(timer)
  timer = setTimeout(() => region?.classList.remove('shown'), 4000)
}
