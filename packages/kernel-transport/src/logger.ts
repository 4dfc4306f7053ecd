/**
 * Minimal structured logger. `console` fits, and so do pino/winston child loggers (their
 * `warn(obj, msg)` argument order differs; wrap them). Only `warn` is required.
 */
export interface TransportLogger {
  warn(message: string, fields?: Readonly<Record<string, unknown>>): void;
  error?(message: string, fields?: Readonly<Record<string, unknown>>): void;
  debug?(message: string, fields?: Readonly<Record<string, unknown>>): void;
}

/** Default logger: warnings and errors to `console.warn`/`console.error` with a `rebuno:` prefix. */
export const consoleLogger: TransportLogger = {
  warn(message, fields) {
    if (fields === undefined) console.warn(`rebuno: ${message}`);
    else console.warn(`rebuno: ${message}`, fields);
  },
  error(message, fields) {
    if (fields === undefined) console.error(`rebuno: ${message}`);
    else console.error(`rebuno: ${message}`, fields);
  },
};
