import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** The repository's root folder (the kit lives at verify/kit; src/ and dist/ are one level below). */
export const REPO_ROOT = fileURLToPath(new URL("../../../", import.meta.url));

/** The shared protocol vectors (`<repository>/vectors/`). */
export const VECTORS_DIR = new URL("../../../vectors/", import.meta.url);

/** Load one vector file by name, with or without the `.json` suffix. */
export function loadVector<T = unknown>(name: string): T {
  const file = name.endsWith(".json") ? name : `${name}.json`;
  return JSON.parse(readFileSync(new URL(file, VECTORS_DIR), "utf8")) as T;
}
