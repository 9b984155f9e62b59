/**
 * The release API: the store (files or PostgreSQL), the lifecycle the run commands call (begin, record, finish,
 * unlock), history and preview. Import from here.
 */
export type { Release, ReleaseState } from './types.js';
export { isRunningPhase } from './types.js';
export { describeBackend, kappsHome, openReleaseStore, resolveBackend } from './store.js';
export { ReleaseRecorder, beginRelease, describeHolder, unlockRelease } from './recorder.js';
export { currentOwner, ownerFor } from './owner.js';
export type { PreviewDocument, PreviewRow, RefreshResult } from './preview.js';
export {
  applyRefresh,
  computePreview,
  formatNotRecorded,
  formatPreviewDetails,
  formatPreviewTable,
  previewDocument,
} from './preview.js';
export { specDigest } from './canonical-json.js';
export { describeProjectSource, legacyHistoryHint, resolveProject } from './target.js';
