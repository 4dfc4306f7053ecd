import { vi } from "vitest";
import { Client, type ClientOptions } from "../src/index.js";
import type { FakeKernel } from "./fake-kernel.js";

/** A logger whose calls tests can inspect (and that keeps retry notices out of the output). */
export function quietLogger() {
  return { warn: vi.fn(), error: vi.fn(), debug: vi.fn() };
}

/** A client for the fake kernel: fixed key, empty environment, millisecond backoff. */
export function clientFor(kernel: FakeKernel, options: ClientOptions = {}): Client {
  return new Client({
    baseUrl: kernel.url,
    apiKey: "test-key",
    env: {},
    retry: { baseMs: 1, maxMs: 5 },
    logger: quietLogger(),
    ...options,
  });
}
