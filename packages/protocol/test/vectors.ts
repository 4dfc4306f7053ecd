import { readFileSync } from "node:fs";

/** Directory of the shared protocol vectors (`<repository>/vectors/`, copied from the shared reference). */
export const VECTORS_DIR = new URL("../../../vectors/", import.meta.url);

/** Load one vector file by name, with or without the `.json` suffix. */
export function loadVector<T = unknown>(name: string): T {
  const file = name.endsWith(".json") ? name : `${name}.json`;
  return JSON.parse(readFileSync(new URL(file, VECTORS_DIR), "utf8")) as T;
}
