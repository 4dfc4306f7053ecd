/**
 * The event-loop stall monitor where `node:perf_hooks` is absent (browsers, Deno, Bun, workers;
 * selected through engine-web.ts). loop-monitor.ts is itself portable (a sampling timer, no
 * `node:*` import), so every runtime shares one implementation and one set of guarantees.
 */
export { sharedLoopMonitor } from "./loop-monitor.js";
