// Preloaded (`--require`) by bench/tracing.mjs's "absent" subject: resolving `@opentelemetry/api`
// fails as it does in an install without the optional peer, so the SDK takes its no-API path.
const Module = require("node:module");
const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  if (request === "@opentelemetry/api" || request.startsWith("@opentelemetry/api/")) {
    const error = new Error(`Cannot find module '${request}'`);
    error.code = "MODULE_NOT_FOUND";
    throw error;
  }
  return resolve.call(this, request, ...rest);
};
