// Public API of @rebuno/dev. Every export is listed by name (no `export *`).
// The command itself is `bin/rebuno-dev.js` (dist/cli.js); this entry is for embedding and reuse:
// the command line, the provisioning manifest and the per-step timeline, each usable on its own.
export type { AuthMode, CliOptions } from "./cli-options.js";
export {
  ANONYMOUS_NETWORK_EXIT_CODE,
  parseAuthMode,
  parseCliArgs,
  parseListen,
  parseSqliteSynchronous,
  USAGE,
} from "./cli-options.js";
export type { TimelineOptions, TimelinePrinter } from "./cli-timeline.js";
export { startTimeline, timelineLine } from "./cli-timeline.js";
export type { Provisioning } from "./provisioning.js";
export { expandEnv, loadProvisioning, parseProvisioning } from "./provisioning.js";
