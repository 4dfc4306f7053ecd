/**
 * Installs `Symbol.metadata` (TC39 decorator metadata) when the runtime lacks it — every Node
 * release so far does. It must run before any decorated class is evaluated: TypeScript only
 * creates `context.metadata` when the symbol exists at class-definition time. `Symbol.for` is the
 * same fallback key esbuild, Babel and SWC use, so classes lowered by any of them agree with us.
 *
 * Importing `@rebuno/sdk` runs this (the index imports it first, and the module that defines
 * `@tool` imports it too, so a bundler that keeps `tool` keeps the polyfill).
 */
const symbolCtor = Symbol as unknown as { metadata?: symbol };
symbolCtor.metadata ??= Symbol.for("Symbol.metadata");

/** The metadata symbol in use (native or polyfilled). */
export const METADATA_SYMBOL: symbol = symbolCtor.metadata;
