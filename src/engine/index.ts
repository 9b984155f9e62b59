/**
 * The engine: what a command does, in-process, for whoever drives it — the CLI (src/cli/) or the runs server
 * (src/server/). It owns no process-wide state: no signals, no exit codes, no stdout/stderr (see `EngineContext`).
 */
export type { EngineContext, StackParams, TargetParams } from './context.js';
export { generateDocument, previewDeleteStack, previewStack } from './generate.js';
export type { PreviewResult } from './preview.js';
export { runOperation, runMode, type RunHooks, type RunOutcome, type RunParams } from './run.js';
export { createRunLog, type LogLine } from './run-log.js';
export { type RecordParams, type RunRecorder } from './release-run.js';
export { openTarget } from './target.js';
export {
  previewRollback,
  rollbackStack,
  RollbackRefusedError,
  type RollbackHooks,
  type RollbackParams,
  type RollbackPreview,
} from './rollback.js';
export { checkDrift, type DriftOptions, type DriftResult } from './drift.js';
