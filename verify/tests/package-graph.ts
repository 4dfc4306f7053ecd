// What the topology tests read: each package's manifest, the bare specifiers its src/ imports, and
// the packages an install of it brings in (walked in the installed node_modules tree).
import { existsSync, readdirSync, readFileSync, realpathSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

export const ROOT = fileURLToPath(new URL("../../", import.meta.url));

export interface Manifest {
  readonly name: string;
  readonly private?: boolean;
  readonly dependencies?: Record<string, string>;
  readonly optionalDependencies?: Record<string, string>;
  readonly peerDependencies?: Record<string, string>;
  readonly peerDependenciesMeta?: Record<string, { readonly optional?: boolean }>;
  readonly devDependencies?: Record<string, string>;
  // biome-ignore lint/suspicious/noExplicitAny: the rest of package.json, read field by field in tests
  readonly [field: string]: any;
}

export interface WorkspacePackage {
  /** Folder name under packages/. */
  readonly dir: string;
  readonly json: Manifest;
}

export const readJson = (path: string): Manifest => JSON.parse(readFileSync(path, "utf8"));

export const workspacePackages = (): WorkspacePackage[] =>
  readdirSync(join(ROOT, "packages"))
    .filter((dir) => existsSync(join(ROOT, "packages", dir, "package.json")))
    .map((dir) => ({ dir, json: readJson(join(ROOT, "packages", dir, "package.json")) }));

/** The TypeScript sources under `dir` (declaration files excluded). */
export function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return /\.(ts|tsx|mts)$/.test(name) && !name.endsWith(".d.ts") ? [path] : [];
  });
}

/** `@scope/name/sub/path` → `@scope/name`; `name/sub` → `name`. */
export function packageOf(specifier: string): string {
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0]!;
}

/**
 * The packages a src/ tree imports: every bare specifier (static, dynamic with a literal, `require`
 * with a literal, and type-only imports too), reduced to its package name. Relative paths, the
 * package's own `#` import conditions and `node:` built-ins are not packages.
 */
export function importedPackages(srcDir: string): Set<string> {
  const found = new Set<string>();
  for (const file of sourceFiles(srcDir)) {
    for (const { fileName } of ts.preProcessFile(readFileSync(file, "utf8"), true, true).importedFiles) {
      if (/^(\.|#|node:)/.test(fileName)) continue;
      found.add(packageOf(fileName));
    }
  }
  return found;
}

/** Where Node would find `name` from `fromDir`: the nearest node_modules/<name>, symlinks followed. */
function locate(fromDir: string, name: string): string | undefined {
  for (let dir = realpathSync(fromDir); ; dir = dirname(dir)) {
    const candidate = join(dir, "node_modules", name);
    if (existsSync(join(candidate, "package.json"))) return realpathSync(candidate);
    if (dirname(dir) === dir) return undefined;
  }
}

/**
 * Every package an install of the package in `dir` brings in (dependencies and optional ones, as
 * npm installs both), name → the folder it was found in. A missing optional dependency is skipped
 * (it may legitimately be absent); a missing required one throws, since the walk would be wrong.
 */
export function installedClosure(dir: string, into = new Map<string, string>()): Map<string, string> {
  const json = readJson(join(dir, "package.json"));
  const optional = new Set(Object.keys(json.optionalDependencies ?? {}));
  for (const dep of Object.keys({ ...json.dependencies, ...json.optionalDependencies })) {
    if (into.has(dep)) continue;
    const at = locate(dir, dep);
    if (at === undefined) {
      if (optional.has(dep)) continue;
      throw new Error(`${json.name}: dependency ${dep} is not installed (run pnpm install)`);
    }
    into.set(dep, at);
    installedClosure(at, into);
  }
  return into;
}
