// Public API of @rebuno/cli. Every export is listed by name (no `export *`).
// The command itself is `bin/rebuno.js` (dist/main.js); this entry is for embedding and reuse.
export { EXIT, exitCodeFor } from "./exit-codes.js";
export type { CliIo } from "./output.js";
export { CLI_VERSION, runCli } from "./program.js";
export type { FollowTimelineOptions, FormatEntryOptions, TimelineEntry } from "./timeline.js";
export { describeEvent, EXCERPT_CHARS, errorText, excerpt, followTimeline, formatEntry } from "./timeline.js";
