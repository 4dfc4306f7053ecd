// The test kit (`@rebuno/test-kit`, private): what the repository's suites share. Each suite imports
// it by name; a guard test (verify/tests/kit-ownership.test.ts) keeps the helpers here.
export { type AgentProcess, type AgentProcessOptions, startAgentProcess } from "./agent-process.js";
export { type Bundle, type BundleRun, bundleCli, runBundle } from "./cli-bundle.js";
export { ChildProcessFailed, type ChildProcessOutput } from "./errors.js";
export {
  DEFAULT_WAIT_MS,
  type Exit,
  LineProcess,
  type LineProcessOptions,
  ProcessGroup,
} from "./line-process.js";
export { freePort, freePorts } from "./ports.js";
export {
  REBUNO_DEV_BIN,
  REBUNO_DEV_PACKAGE,
  REBUNO_DEV_SOURCE,
  type RebunoDev,
  type RebunoDevFrom,
  type RebunoDevOptions,
  rebunoDevBinIn,
  rebunoDevCommand,
  spawnRebunoDev,
  startRebunoDev,
} from "./rebuno-dev.js";
export { bundleRebunoDev, type RebunoDevBundle } from "./rebuno-dev-bundle.js";
export { loadVector, REPO_ROOT, VECTORS_DIR } from "./repository.js";
export { TempDirs } from "./temp-dirs.js";
