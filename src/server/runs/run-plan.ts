/**
 * What a run does, by its type, in one table: which engine operation it drives, whether it changes the stack,
 * records a release and takes the stack's release lock, which role submits it, what its result is. `runPlan` adds
 * what the run's options decide (an apply that names a preview is approved by that preview, and applies only while
 * it still holds). The executor and the engine adapter ask the plan; nothing else tests a run's type.
 */
import type { Role, RunRequestOptions, RunType } from '../../api/index.js';
import { RunRefused } from './errors.js';

/** What one type of run does. */
export interface RunKind {
  /**
   * What it asks of the engine: a generated document, a preview, an operation on the stack (`install -y`,
   * `delete -y`), a rollback to a recorded revision (`release rollback -y`), or a drift check (`kapps drift`).
   */
  readonly engine: 'generate' | 'preview' | 'install' | 'delete' | 'rollback' | 'drift';
  /** How its messages name it (`Apply of shop/dev succeeded: …`). */
  readonly label: string;
  /** The role that may submit it. */
  readonly role: Extract<Role, 'plan' | 'apply'>;
  /** It changes nothing: no kapp runs, no release is written. */
  readonly readOnly: boolean;
  /** It records a release: a run that ends without closing its release has it closed for it, so no stack stays locked. */
  readonly records: boolean;
  /** It takes the stack's release lock (the CLI's): refused while another run holds it. */
  readonly takesLock: boolean;
  /** It may name a finished preview run to apply exactly what that preview showed. */
  readonly mayApplyPreview: boolean;
  /** The media type of its result. */
  readonly resultType: 'application/yaml' | 'application/json';
}

/** Every run type's row. */
export const RUN_KINDS: Readonly<Record<RunType, RunKind>> = {
  generate: {
    engine: 'generate',
    label: 'Generate',
    role: 'plan',
    readOnly: true,
    records: false,
    takesLock: false,
    mayApplyPreview: false,
    resultType: 'application/yaml',
  },
  preview: {
    engine: 'preview',
    label: 'Preview',
    role: 'plan',
    readOnly: true,
    records: false,
    takesLock: false,
    mayApplyPreview: false,
    resultType: 'application/json',
  },
  apply: {
    engine: 'install',
    label: 'Apply',
    role: 'apply',
    readOnly: false,
    records: true,
    takesLock: true,
    mayApplyPreview: true,
    resultType: 'application/json',
  },
  destroy: {
    engine: 'delete',
    label: 'Destroy',
    role: 'apply',
    readOnly: false,
    records: true,
    takesLock: true,
    mayApplyPreview: false,
    resultType: 'application/json',
  },
  rollback: {
    engine: 'rollback',
    label: 'Rollback',
    role: 'apply',
    readOnly: false,
    records: true,
    takesLock: true,
    // A rollback may name the preview of the same rollback (a preview run with `toRevision`).
    mayApplyPreview: true,
    resultType: 'application/json',
  },
  drift: {
    engine: 'drift',
    label: 'Drift check',
    role: 'plan',
    readOnly: true,
    records: false,
    takesLock: false,
    mayApplyPreview: false,
    resultType: 'application/json',
  },
};

/** One run's plan: its type's row and what its options add. */
export interface RunPlan extends RunKind {
  readonly type: RunType;
  /**
   * The preview run that approved it: the run first checks that this preview still holds (the same kapps, actions
   * and specs, against the same release), and fails as a stale preview, nothing applied, when it does not.
   */
  readonly approvedBy: string | undefined;
}

/** The plan of a run of `type` with `options`; `RunRefused` for a preview named by a run that may not apply one. */
export function runPlan(type: RunType, options: Pick<RunRequestOptions, 'previewRunId'> = {}): RunPlan {
  const kind = RUN_KINDS[type];
  if (options.previewRunId !== undefined && !kind.mayApplyPreview)
    throw new RunRefused(`a ${type} run may not name a preview run (${options.previewRunId}); nothing was run`);
  return { ...kind, type, approvedBy: options.previewRunId };
}
