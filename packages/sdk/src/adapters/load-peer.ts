/**
 * Framework packages are optional peer dependencies: an application using only the Vercel
 * exporter must not need LangChain installed. They are loaded with a dynamic `import()` from the
 * application's install, so the framework's classes are the very ones the application uses (a
 * CommonJS `require` could load a second copy and break `instanceof` checks inside the framework).
 */
import { ConfigurationError } from "@rebuno/protocol";

/**
 * Import the first of `specifiers` that resolves. Only "module not found" moves on to the next;
 * any other failure (the package threw while loading) is reported as it is.
 */
export async function loadOptionalPeer<T>(
  specifiers: readonly string[],
  importer: (specifier: string) => Promise<unknown>,
  feature: string,
): Promise<T> {
  let last: unknown;
  for (const specifier of specifiers) {
    try {
      return (await importer(specifier)) as T;
    } catch (error) {
      if (!isModuleNotFound(error)) throw error;
      last = error;
    }
  }
  throw new ConfigurationError(
    `${feature} needs ${specifiers.map((s) => `'${s}'`).join(" or ")}; install it as a dependency of your app`,
    { cause: last },
  );
}

function isModuleNotFound(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return (
    code === "ERR_MODULE_NOT_FOUND" ||
    code === "MODULE_NOT_FOUND" ||
    /Cannot find (module|package)/.test(String(error))
  );
}
