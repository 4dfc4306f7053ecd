/**
 * Which kernel the console talks to and with which token. The token is typed into the sign-in form
 * and kept in `sessionStorage` (this tab only, gone when it closes), keyed by the kernel's origin so
 * a token for one kernel is never sent to another opened later in the same tab. It is sent only as
 * `Authorization: Bearer`. A token in the address (`?token=`, or `user:token@` in `?kernel=`) is
 * never used, stored or shown: it is removed from the address bar at once, since addresses end up
 * in history, bookmarks and server logs.
 */
import { Client } from "@rebuno/client";

/** Query parameters someone might put a token in. */
const TOKEN_PARAMS = ["token", "api_key", "apikey", "api-key", "access_token", "bearer", "auth"];
const STORAGE_PREFIX = "rebuno-console-token:";

/** The kernel to talk to, and whether a token had to be dropped from the address. */
export interface KernelTarget {
  /** Base URL, without any user:password part. */
  readonly url: string;
  /** True when the address carried a token (now removed from the address bar, never used). */
  readonly droppedUrlToken: boolean;
}

/**
 * Read `?kernel=URL` (default: this page's origin), strip credentials and token parameters, and
 * rewrite the address bar without them.
 */
export function readKernelTarget(): KernelTarget {
  const address = new URL(location.href);
  let dropped = false;
  for (const name of TOKEN_PARAMS) {
    if (address.searchParams.has(name)) {
      address.searchParams.delete(name);
      dropped = true;
    }
  }
  let url = location.origin;
  const kernel = address.searchParams.get("kernel");
  if (kernel !== null) {
    let parsed: URL | undefined;
    try {
      parsed = new URL(kernel);
    } catch {
      parsed = undefined; // left as typed: the client reports the bad URL on the first call
    }
    if (parsed !== undefined && (parsed.username !== "" || parsed.password !== "")) {
      parsed.username = "";
      parsed.password = "";
      dropped = true;
      address.searchParams.set("kernel", parsed.href.replace(/\/$/, ""));
    }
    url = parsed === undefined ? kernel : parsed.href.replace(/\/$/, "");
  }
  if (dropped) history.replaceState(history.state, "", address.href);
  return { url, droppedUrlToken: dropped };
}

function storageKey(kernelUrl: string): string {
  try {
    return STORAGE_PREFIX + new URL(kernelUrl).origin;
  } catch {
    return STORAGE_PREFIX + kernelUrl;
  }
}

/** The token signed in with for this kernel in this tab, if any. */
export function storedToken(kernelUrl: string): string | undefined {
  return sessionStorage.getItem(storageKey(kernelUrl)) ?? undefined;
}

/** Keep `token` for this kernel in this tab (`undefined` forgets it). */
export function storeToken(kernelUrl: string, token: string | undefined): void {
  if (token === undefined) sessionStorage.removeItem(storageKey(kernelUrl));
  else sessionStorage.setItem(storageKey(kernelUrl), token);
}

/**
 * A client for `kernelUrl`, sending `token` as a bearer token (none when undefined). One attempt
 * per call: the views poll anyway, and a 401 must reach the sign-in form at once.
 */
export function kernelClient(kernelUrl: string, token: string | undefined): Client {
  return new Client({ baseUrl: kernelUrl, apiKey: token ?? "", retry: { attempts: 1 } });
}
