import { describe, expect, it, vi } from "vitest";

// Simulate an application that uses zod 3 but did not install the optional peer: the module's
// `createRequire` resolver fails for "zod-to-json-schema" only.
vi.mock("node:module", async (importOriginal) => {
  const actual = await importOriginal<typeof import("node:module")>();
  return {
    ...actual,
    createRequire: (url: string | URL) => {
      const real = actual.createRequire(url);
      const fake = ((id: string) => {
        if (id === "zod-to-json-schema") {
          throw Object.assign(new Error(`Cannot find module '${id}'`), { code: "MODULE_NOT_FOUND" });
        }
        return real(id);
      }) as NodeJS.Require;
      return Object.assign(fake, { resolve: real.resolve, cache: real.cache });
    },
  };
});

describe("zod 3 without zod-to-json-schema", () => {
  it("fails with a ConfigurationError that says what to install", async () => {
    const { toJsonSchema } = await import("../../src/schema/index.js");
    const { ConfigurationError } = await import("@rebuno/protocol");
    const { z } = await import("zod3");
    let caught: unknown;
    try {
      toJsonSchema(z.object({ a: z.string() }));
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(ConfigurationError);
    expect((caught as Error).message).toMatch(/install it \(npm i zod-to-json-schema\) or upgrade to zod 4/);
    // The real module is still resolvable, so the failure above came from the missing peer path.
    const actual = await vi.importActual<typeof import("node:module")>("node:module");
    expect(typeof actual.createRequire(import.meta.url)("zod-to-json-schema").zodToJsonSchema).toBe(
      "function",
    );
  });
});
