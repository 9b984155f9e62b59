/**
 * The release API: the store (files or PostgreSQL), the lifecycle the run commands call (begin, record, finish,
 * unlock), history and preview. Import from here.
 */
export type {
  FinalPhase,
  JsonValue,
  KappState,
  KappStateStatus,
  Release,
  ReleaseOperation,
  ReleaseOwner,
  ReleasePhase,
  ReleaseSelectors,
  ReleaseState,
  ReleaseSummary,
  ReleaseUnlock,
  RunningPhase,
  StepRecord,
} from './types.js';
export { isRunningPhase, summarise } from './types.js';
export {
  ReleaseConflictError,
  ReleaseLockedError,
  ReleaseNotFoundError,
  ReleaseRecordError,
  ReleaseStoreError,
  RevisionTakenError,
} from './errors.js';
export type { BackendInputs, BackendSource, BackendSpec, ReleaseStore, UpdateOptions } from './store.js';
export { describeBackend, kappsHome, openReleaseStore, parseBackend, resolveBackend } from './store.js';
export type { BeginReleaseOptions, KappStateInput, UnlockReleaseOptions, UnlockResult } from './recorder.js';
export {
  HEARTBEAT_MS,
  ReleaseRecorder,
  beginRelease,
  describeHolder,
  phaseFor,
  unlockCommand,
  unlockRelease,
} from './recorder.js';
export { STALE_HEARTBEAT_MS, currentOwner, formatOwner, ownerHealth } from './owner.js';
export type {
  PreviewAction,
  PreviewDocument,
  PreviewDocumentKapp,
  PreviewKapp,
  PreviewRow,
  PreviewSpecs,
  RefreshResult,
} from './preview.js';
export {
  PREVIEW_ACTIONS,
  applyRefresh,
  computePreview,
  countActions,
  formatPreviewDetails,
  formatPreviewTable,
  hasChanges,
  previewDocument,
  specDigest,
} from './preview.js';
export type { SpecChange } from './spec-diff.js';
export { SENSITIVE, SENSITIVE_CHANGED, diffKappSpecs, formatChange, redactKappSpec } from './spec-diff.js';
export type { KappChange, ReleaseDiff, ReleaseListEntry } from './history.js';
export { diffReleases, formatReleaseDiff, formatReleaseTable, releaseListEntries } from './history.js';
export { describeProjectSource, legacyHistoryHint, resolveProject } from './target.js';
export type { ProjectSource, ResolvedProject } from './target.js';
export { redactText, redactUrl } from './redact.js';
