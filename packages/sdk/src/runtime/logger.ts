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

function write(sink: (...args: unknown[]) => void, message: string, fields?: Record<string, unknown>): void {
  if (fields === undefined) sink(message);
  else sink(message, fields);
}

/**
 * Default logger: console. Warnings and errors carry the `rebuno:` prefix the previous SDK used;
 * info lines are already self-describing (`rebuno agent 'x' listening on …`).
 */
export const consoleLogger: Logger = {
  debug: () => {},
  info: (message, fields) => write(console.info, message, fields),
  warn: (message, fields) => write(console.warn, `rebuno: ${message}`, fields),
  error: (message, fields) => write(console.error, `rebuno: ${message}`, fields),
};
