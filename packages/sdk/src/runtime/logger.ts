/**
 * The logging seam. Anything with `warn` (and optionally `error`, `info`, `debug`) (console, pino, winston) works. Messages
 * never contain secrets: the SDK only logs ids, step targets and error messages.
 */
export interface Logger {
  debug?(message: string, fields?: Record<string, unknown>): void;
  info?(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error?(message: string, fields?: Record<string, unknown>): void;
}

/** Default logger: console, with the `rebuno:` prefix the previous SDK used. */
export const consoleLogger: Logger = {
  debug: () => {},
  info: (message, fields) => console.info(`rebuno: ${message}`, fields ?? ""),
  warn: (message, fields) => console.warn(`rebuno: ${message}`, fields ?? ""),
  error: (message, fields) => console.error(`rebuno: ${message}`, fields ?? ""),
};
