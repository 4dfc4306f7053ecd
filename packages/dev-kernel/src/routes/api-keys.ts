/** API key routes (docs/protocol.md §4.16). Tokens are random, shown once, and stored only as sha256. */
import { randomBytes } from "node:crypto";
import { API_KEY_SCOPES, CreateApiKeyRequestSchema, validateRequest } from "@rebuno/protocol";
import type { ApiKeyProvision } from "../config.js";
import type { KernelContext } from "../engine/context.js";
import { conflict, invalid, notFound } from "../errors.js";
import { tokenHash } from "../http/auth.js";
import { parseBody } from "../http/core.js";
import { json, noContent } from "../http/respond.js";
import type { Route, RouteInput } from "../http/router.js";
import type { ApiKeyRow } from "../store/types.js";
import { formatTime } from "../time.js";

const SCOPES: ReadonlySet<string> = new Set(API_KEY_SCOPES);

/** A fresh bearer token: `rbn_` + 32 random bytes in base64url. */
export function newToken(): string {
  return `rbn_${randomBytes(32).toString("base64url")}`;
}

/** Key metadata (never the token). */
export function apiKeyView(k: ApiKeyRow): Record<string, unknown> {
  const v: Record<string, unknown> = {
    id: k.id,
    name: k.name,
    scopes: k.scopes,
    created_at: formatTime(k.createdAt),
  };
  if (k.rotatedAt !== undefined) v.rotated_at = formatTime(k.rotatedAt);
  if (k.revokedAt !== undefined) v.revoked_at = formatTime(k.revokedAt);
  return v;
}

/** Create a key with a given token (provisioning) — the token must not already be in use. */
export function createApiKey(ctx: KernelContext, p: ApiKeyProvision): ApiKeyRow {
  if (p.token === "") throw invalid("api key token must not be empty");
  for (const scope of p.scopes) {
    if (!SCOPES.has(scope)) throw invalid(`unknown scope ${JSON.stringify(scope)}`);
  }
  const hash = tokenHash(p.token);
  if (ctx.store.findApiKeyByTokenHash(hash) !== undefined)
    throw conflict("an api key with this token exists");
  const row: ApiKeyRow = {
    id: ctx.newId(),
    name: p.name,
    scopes: [...p.scopes],
    tokenHash: hash,
    createdAt: ctx.clock(),
  };
  ctx.store.transaction(() => ctx.store.insertApiKey(row));
  return row;
}

function create(ctx: KernelContext, input: RouteInput) {
  const { body } = parseBody(input.req, (v) => validateRequest(CreateApiKeyRequestSchema, v));
  if (body.name === "") throw invalid("name is required");
  const token = newToken();
  const row = createApiKey(ctx, { name: body.name, scopes: body.scopes, token });
  return json(201, { ...apiKeyView(row), token });
}

function keyOr404(ctx: KernelContext, id: string): ApiKeyRow {
  const key = ctx.store.getApiKey(id);
  if (key === undefined) throw notFound("api key");
  return key;
}

function rotate(ctx: KernelContext, input: RouteInput) {
  const key = keyOr404(ctx, input.params[0]!);
  if (key.revokedAt !== undefined) throw conflict("api key is revoked");
  const token = newToken();
  const rotated: ApiKeyRow = { ...key, tokenHash: tokenHash(token), rotatedAt: ctx.clock() };
  ctx.store.transaction(() => ctx.store.updateApiKey(rotated));
  return json(200, { ...apiKeyView(rotated), token });
}

function revoke(ctx: KernelContext, input: RouteInput) {
  const key = keyOr404(ctx, input.params[0]!);
  if (key.revokedAt === undefined) {
    ctx.store.transaction(() => ctx.store.updateApiKey({ ...key, revokedAt: ctx.clock() }));
  }
  return noContent();
}

/** Routes of this family. */
export const apiKeyRoutes: readonly Route[] = [
  { method: "POST", path: "/v0/api-keys", auth: "bearer", scopes: ["api_keys:manage"], handler: create },
  {
    method: "GET",
    path: "/v0/api-keys",
    auth: "bearer",
    scopes: ["api_keys:manage"],
    handler: (ctx) => json(200, ctx.store.listApiKeys().map(apiKeyView)),
  },
  {
    method: "POST",
    path: "/v0/api-keys/:uuid/rotate",
    auth: "bearer",
    scopes: ["api_keys:manage"],
    handler: rotate,
  },
  {
    method: "DELETE",
    path: "/v0/api-keys/:uuid",
    auth: "bearer",
    scopes: ["api_keys:manage"],
    handler: revoke,
  },
];
