import { ConfigurationError, ValidationError } from "@rebuno/protocol";

/** A parsed kernel base URL. */
export interface BaseUrl {
  /** The normalized base URL, without a trailing slash. */
  readonly href: string;
  /** `scheme://host[:port]`. */
  readonly origin: string;
  /** `http:`, `https:`, or another scheme when a custom `fetch` handles it. */
  readonly protocol: string;
  /**
   * Path prefix in escaped form, without a trailing slash (`""` or `/rebuno`). It is part of every
   * request target, hence of every signature (docs/protocol.md §3.3).
   */
  readonly pathPrefix: string;
}

/**
 * Parse and validate a kernel base URL such as `http://127.0.0.1:8080` or
 * `https://gw.example.com/rebuno/`. The prefix comes from the WHATWG parser, so it is already in
 * the escaped form that goes on the request line. Query strings, fragments and credentials are
 * refused: they would silently not be part of the request target that gets signed.
 */
export function parseBaseUrl(baseUrl: string): BaseUrl {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch (cause) {
    throw new ConfigurationError(`invalid kernel base URL: ${JSON.stringify(baseUrl)}`, { cause });
  }
  if (url.search !== "" || url.hash !== "") {
    throw new ConfigurationError(`kernel base URL must not have a query or fragment: ${baseUrl}`);
  }
  if (url.username !== "" || url.password !== "") {
    throw new ConfigurationError("kernel base URL must not contain credentials");
  }
  const pathPrefix = url.pathname.replace(/\/+$/, "");
  return { href: url.origin + pathPrefix, origin: url.origin, protocol: url.protocol, pathPrefix };
}

// encodeURIComponent leaves !'()* alone; the WHATWG URL parser (used by fetch) would escape `'` in
// a query, so the bytes sent would differ from the bytes signed. Escaping them too keeps every
// target stable under any parser; Go keeps valid escapes as sent (URL.RequestURI uses RawPath).
const SUB_DELIMS = /[!'()*]/g;

function hexEscape(c: string): string {
  return `%${c.charCodeAt(0).toString(16).toUpperCase()}`;
}

// Ids on the hot path (UUIDs, 64-hex step ids) contain only unreserved characters, which escape
// to themselves; one regex test is far cheaper than encodeURIComponent + replace on every request.
const UNRESERVED_ONLY = /^[A-Za-z0-9_.~-]*$/;

function strictEncode(value: string, what: string): string {
  if (UNRESERVED_ONLY.test(value)) return value;
  try {
    return encodeURIComponent(value).replace(SUB_DELIMS, hexEscape);
  } catch (cause) {
    // URIError: a lone surrogate cannot be encoded as UTF-8.
    throw new ValidationError(`${what} is not valid Unicode text`, { cause });
  }
}

/**
 * Percent-escape one path segment (an execution id, step id or resource key) so that it stays one
 * segment: `alpha/beta` → `alpha%2Fbeta`, `a b` → `a%20b`. `""`, `.` and `..` are refused because
 * URL parsers and Go's router collapse them into a different path.
 */
export function escapePathSegment(value: string, what = "path segment"): string {
  if (typeof value !== "string" || value === "" || value === "." || value === "..") {
    throw new ValidationError(`${what} must be a non-empty string other than "." and ".."`);
  }
  return strictEncode(value, what);
}

/**
 * `?k=v&k2=v2` with the same strict escaping, skipping `undefined` values; `""` when nothing is
 * left. Keys keep the order given (the target is signed as sent, so order only needs to be stable).
 */
export function queryString(params: Readonly<Record<string, string | number | boolean | undefined>>): string {
  let out = "";
  for (const key of Object.keys(params)) {
    const value = params[key];
    if (value === undefined) continue;
    out += `${out === "" ? "?" : "&"}${strictEncode(key, "query key")}=${strictEncode(String(value), key)}`;
  }
  return out;
}
