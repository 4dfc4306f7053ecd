// `rebuno-dev` run from source by the tests that spawn it: `node --import tsx <REBUNO_DEV_CLI>` with
// FROM_SOURCE_ENV, so the command and the packages it imports (dev kernel, console, protocol) are the
// working tree's sources, not a stale dist/.
import { fileURLToPath } from "node:url";

export const REBUNO_DEV_CLI = fileURLToPath(new URL("../src/cli.ts", import.meta.url));

/** tsx reads TSX_TSCONFIG_PATH: fixtures/tsconfig.json maps the @rebuno/* imports to their sources. */
export const FROM_SOURCE_ENV = {
  TSX_TSCONFIG_PATH: fileURLToPath(new URL("./fixtures/tsconfig.json", import.meta.url)),
} as const;
