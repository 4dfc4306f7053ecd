/**
 * Authentication (docs/protocol.md §3): agent request signature v1 on agent routes, bearer tokens
 * (bootstrap token or scoped API keys) on client/admin routes, and the dual rule.
 */
import { timingSafeEqual } from "node:crypto";
import { isTimestampWithinWindow, verifyRequestSignature } from "@rebuno/protocol";
import { tokenDigest } from "../config.js";
import type { KernelContext } from "../engine/context.js";
import type { Lease } from "../engine/leases.js";
import { forbidden, invalid, unauthorized } from "../errors.js";
import { parseUuid } from "../ids.js";
import { DEV_MODE_REJECTS_UNKNOWN_TOKENS } from "../inferences.js";
import { type CoreRequest, headerCount, headerValue } from "./types.js";

/** How a route authenticates. */
export type AuthClass = "bearer" | "hmac" | "dual" | "none";

/** Who is calling. */
export type Caller =
  | { readonly kind: "agent"; readonly agentId: string }
  | { readonly kind: "client"; readonly scopes: ReadonlySet<string> | "all" }
  | { readonly kind: "anonymous" };

const H_AGENT = "rebuno-agent-id";
const H_TIMESTAMP = "rebuno-timestamp";
const H_DISPATCH_ID = "rebuno-dispatch-id";
const H_DISPATCH_ATTEMPT = "rebuno-dispatch-attempt";
const H_SIGNATURE = "rebuno-signature";
// Signed headers that must appear at most once and carry no CR/LF (checked in this order).
const SIGNED_HEADERS: readonly string[] = [H_TIMESTAMP, H_DISPATCH_ID, H_DISPATCH_ATTEMPT];
const ANONYMOUS: Caller = Object.freeze({ kind: "anonymous" });

/** sha256 hex of a bearer token (only hashes are stored). */
export function tokenHash(token: string): string {
  return tokenDigest(token).toString("hex");
}

function hasCrLf(v: string | undefined): boolean {
  return v !== undefined && (v.includes("\r") || v.includes("\n"));
}

/** Verify the v1 agent signature, in the order of docs/protocol.md §3.3. Returns the agent id. */
export function authenticateAgent(ctx: KernelContext, req: CoreRequest): string {
  const agentId = headerValue(req.headers, H_AGENT);
  const signature = headerValue(req.headers, H_SIGNATURE);
  if (agentId === undefined || agentId === "" || signature === undefined || signature === "") {
    throw unauthorized("missing agent signature");
  }
  if (headerCount(req.headers, H_AGENT) !== 1) throw unauthorized("duplicate Rebuno-Agent-Id header");
  const agent = ctx.store.getAgent(agentId);
  if (agent === undefined) throw unauthorized("unknown agent");
  for (const h of SIGNED_HEADERS) {
    if (headerCount(req.headers, h) > 1 || hasCrLf(headerValue(req.headers, h))) {
      throw unauthorized(`invalid ${h} header`);
    }
  }
  if (headerCount(req.headers, H_SIGNATURE) !== 1) throw unauthorized("duplicate Rebuno-Signature header");
  const timestamp = headerValue(req.headers, H_TIMESTAMP) ?? "";
  if (!isTimestampWithinWindow(timestamp, ctx.clock() / 1000)) {
    throw unauthorized("request timestamp outside the allowed window");
  }
  const ok = verifyRequestSignature({
    secret: agent.secret,
    method: req.method,
    target: req.target,
    timestamp,
    dispatchId: headerValue(req.headers, H_DISPATCH_ID),
    dispatchAttempt: headerValue(req.headers, H_DISPATCH_ATTEMPT),
    body: req.body,
    signature,
  });
  if (!ok) throw unauthorized("invalid signature");
  return agentId;
}

/** Resolve a bearer token (docs/protocol.md §3.1, §3.2). No header: anonymous in dev mode, 401 otherwise. */
export function authenticateBearer(ctx: KernelContext, req: CoreRequest): Caller {
  const count = headerCount(req.headers, "authorization");
  if (count === 0) {
    if (ctx.config.devMode) return ANONYMOUS;
    throw unauthorized("missing bearer token");
  }
  if (count > 1) throw unauthorized("duplicate Authorization header");
  const header = headerValue(req.headers, "authorization")!;
  const match = /^bearer[ \t]+(\S+)[ \t]*$/i.exec(header);
  if (match === null) throw unauthorized("invalid Authorization header");
  const token = match[1]!;
  const digest = tokenDigest(token);
  const { bootstrapTokenHash } = ctx.config;
  // Digests, not the tokens, are compared: equal lengths, so timingSafeEqual leaks neither content nor length.
  if (bootstrapTokenHash !== undefined && timingSafeEqual(digest, bootstrapTokenHash))
    return { kind: "client", scopes: "all" };
  const key = ctx.store.findApiKeyByTokenHash(digest.toString("hex"));
  if (key !== undefined && key.revokedAt === undefined)
    return { kind: "client", scopes: new Set(key.scopes) };
  if (ctx.config.devMode && !DEV_MODE_REJECTS_UNKNOWN_TOKENS) return ANONYMOUS;
  throw unauthorized("invalid bearer token");
}

/** 403 unless the caller holds every scope (anonymous dev callers and the bootstrap token hold all). */
export function requireScopes(caller: Caller, scopes: readonly string[]): void {
  if (caller.kind !== "client" || caller.scopes === "all") return;
  for (const s of scopes) {
    if (!caller.scopes.has(s)) throw forbidden(`missing scope ${s}`);
  }
}

/** Authenticate a request for a route of the given class. */
export function authenticate(
  ctx: KernelContext,
  req: CoreRequest,
  auth: AuthClass,
  scopes: readonly string[],
): Caller {
  switch (auth) {
    case "none":
      return ANONYMOUS;
    case "hmac":
      return { kind: "agent", agentId: authenticateAgent(ctx, req) };
    case "dual":
      // A request carrying either agent header is an agent request (docs/protocol.md §3.1).
      if (headerCount(req.headers, H_AGENT) > 0 || headerCount(req.headers, H_SIGNATURE) > 0) {
        return { kind: "agent", agentId: authenticateAgent(ctx, req) };
      }
      break;
    default:
      break;
  }
  const caller = authenticateBearer(ctx, req);
  requireScopes(caller, scopes);
  return caller;
}

/**
 * The dispatch lease headers. `required`: missing or unparseable → 400
 * `validation error: missing dispatch lease`. Optional: undefined when both are absent.
 */
export function leaseFromHeaders(req: CoreRequest, required: true): Lease;
export function leaseFromHeaders(req: CoreRequest, required: false): Lease | undefined;
export function leaseFromHeaders(req: CoreRequest, required: boolean): Lease | undefined {
  const id = headerValue(req.headers, H_DISPATCH_ID);
  const attempt = headerValue(req.headers, H_DISPATCH_ATTEMPT);
  if (!required && id === undefined && attempt === undefined) return undefined;
  if (id === undefined || id === "" || attempt === undefined || attempt === "") {
    throw invalid("missing dispatch lease");
  }
  const dispatchId = parseUuid(id);
  const n = isShortDecimal(attempt) ? Number(attempt) : Number.NaN;
  if (dispatchId === undefined || !Number.isSafeInteger(n) || n < 1) throw invalid("invalid dispatch lease");
  return { dispatchId, attempt: n };
}

/** `/^\d{1,15}$/` without a regex (runs on every agent write). */
function isShortDecimal(text: string): boolean {
  const n = text.length;
  if (n < 1 || n > 15) return false;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x30 || c > 0x39) return false;
  }
  return true;
}
