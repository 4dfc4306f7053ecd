/**
 * The page's one kernel connection: the target read from the address, the current client (replaced
 * on sign-in and sign-out, so every call reads it through {@link kernel}) and how a failed call is
 * told to the user (a 401 also brings up the sign-in form).
 */
import type { Client } from "@rebuno/client";
import { ForbiddenError, UnauthorizedError } from "@rebuno/protocol";
import { kernelClient, readKernelTarget, storedToken } from "./session.js";

export const target = readKernelTarget();
export const kernelUrl = target.url;

let current: Client = kernelClient(kernelUrl, storedToken(kernelUrl));
let onUnauthorized: () => void = () => {};

/** The client every view calls. */
export function kernel(): Client {
  return current;
}

/** Swap in a client signed in with another token (or none); the old one is closed. */
export function replaceClient(next: Client): void {
  void current.close();
  current = next;
}

/** Set by the app: what to do when a call is answered 401 (show the sign-in form). */
export function setUnauthorizedHandler(handler: () => void): void {
  onUnauthorized = handler;
}

/** What to show for a failed call; a 401 also brings up the sign-in form. */
export function message(err: unknown): string {
  if (UnauthorizedError.isInstance(err)) {
    onUnauthorized();
    return "The kernel asks for a token (401 unauthorized).";
  }
  if (ForbiddenError.isInstance(err)) {
    return `Your token is not allowed to do this (403 ${err.message}). Sign out, then sign in with a token that has that scope.`;
  }
  return err instanceof Error ? err.message : String(err);
}
