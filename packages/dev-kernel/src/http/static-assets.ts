/**
 * Static files served next to the API (the web console, put together by `rebuno-dev`). The kernel
 * library knows nothing of what the files are: it is given a directory, reads its text files once
 * at start (so a request can never reach outside it), and answers `GET`/`HEAD` of `/` with
 * `index.html` and of `/<name>` with that file. Every other request goes to the API unchanged.
 */
import { readdirSync, readFileSync } from "node:fs";
import { extname, join } from "node:path";
import { ConfigurationError } from "@rebuno/protocol";
import type { CoreBodyResponse, CoreHandler, CoreRequest, CoreResponse } from "./types.js";

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".json": "application/json; charset=utf-8",
  ".map": "application/json; charset=utf-8",
};

/** Load the served files of `dir` (text types only; subdirectories are not served). */
export function loadStaticAssets(dir: string): ReadonlyMap<string, CoreBodyResponse> {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (err) {
    throw new ConfigurationError(`staticAssets: cannot read ${JSON.stringify(dir)}: ${String(err)}`);
  }
  const files = new Map<string, CoreBodyResponse>();
  for (const name of names) {
    const type = CONTENT_TYPES[extname(name)];
    if (type === undefined) continue;
    const headers = { "content-type": type, "cache-control": "no-cache" };
    files.set(`/${name}`, { status: 200, headers, body: readFileSync(join(dir, name), "utf8") });
  }
  if (!files.has("/index.html")) {
    throw new ConfigurationError(`staticAssets: ${JSON.stringify(dir)} has no index.html`);
  }
  files.set("/", files.get("/index.html")!);
  return files;
}

/** Serve `files` for `GET`/`HEAD`; every other request (and every unknown path) goes to `core`. */
export function withStaticAssets(
  core: CoreHandler,
  files: ReadonlyMap<string, CoreBodyResponse>,
): CoreHandler {
  return (req: CoreRequest): Promise<CoreResponse> => {
    if (req.method !== "GET" && req.method !== "HEAD") return core(req);
    const q = req.target.indexOf("?");
    const file = files.get(q < 0 ? req.target : req.target.slice(0, q));
    if (file === undefined) return core(req);
    return Promise.resolve(req.method === "HEAD" ? { ...file, body: "" } : file);
  };
}
