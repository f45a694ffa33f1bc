// Preloaded into the server by `BENCH_CAPTURE=off bun run scripts/bench/redirect.ts`: visits are served and
// counted against the links' live counters as usual, but never handed to the click buffer, so nothing is
// written. It measures the redirect path alone (the floor under any click capture). Never used by lnk.
import { ClickBuffer } from '../../../src/modules/clicks/click-buffer'

ClickBuffer.prototype.add = () => {}
