// The version constants the packages send and export (not read from package.json at run time,
// which browsers and workers cannot do) must equal the published package.json versions.
import { readFileSync } from "node:fs";
import { CLIENT_VERSION } from "@rebuno/client";
import { TRANSPORT_VERSION } from "@rebuno/kernel-transport";
import { expect, test } from "vitest";

const version = (pkg: string): string =>
  JSON.parse(readFileSync(new URL(`../../../packages/${pkg}/package.json`, import.meta.url), "utf8")).version;

test("TRANSPORT_VERSION and CLIENT_VERSION equal their package.json versions", () => {
  expect(TRANSPORT_VERSION).toBe(version("kernel-transport"));
  expect(CLIENT_VERSION).toBe(version("client"));
});
