// Where a thread's module is, given its path under src/. From source, that file. In the executable
// (`bun build --compile` with the thread's module added as an entry point, see scripts/build) every
// bundled module's import.meta.url is the executable at the root of its embedded file system
// (/$bunfs/root/lnk; B:/~BUN/root on Windows), and each entry point sits under its path from src/.
export function threadEntry(fromSrc: string): string {
  const compiled = import.meta.url.includes('/$bunfs/') || import.meta.url.includes('~BUN/')
  return new URL(compiled ? `./${fromSrc}` : `../${fromSrc}`, import.meta.url).href
}
