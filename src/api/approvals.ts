/**
 * Approvals and run checks: the gate between a preview and the apply it shows. A project (or one of its stacks)
 * that requires approvals makes each apply, destroy and rollback run its preview first and wait in `needs-approval`
 * holding that preview document (`GET /runs/{id}/preview`) until enough distinct tokens of the allowed roles approve
 * it (`POST /runs/{id}/approve`) or one rejects it (`POST /runs/{id}/reject`). Run checks (policy hooks) judge the
 * preview document after the preview and before the apply; their results are in the run.
 */
import * as z from 'zod';
import { ROLES } from './constants.js';

/** At most this many characters of an approval's or rejection's comment. */
export const MAX_APPROVAL_COMMENT = 2000;

/** The body of `POST /runs/{id}/approve` and `/reject`: an optional comment, kept with the decision. */
export const decideRunSchema = z
  .object({ comment: z.string().max(MAX_APPROVAL_COMMENT) })
  .partial()
  .strict();
export type DecideRun = z.infer<typeof decideRunSchema>;

export const APPROVAL_DECISIONS = ['approved', 'rejected'] as const;

/** One approval or rejection: by which token (its name) of which role, when, and its comment. */
export const approvalDecisionSchema = z.object({
  by: z.string(),
  role: z.enum(ROLES),
  at: z.string(),
  decision: z.enum(APPROVAL_DECISIONS),
  comment: z.string().nullable(),
});
export type ApprovalDecision = z.infer<typeof approvalDecisionSchema>;

/** The one exception to approvals: a token of a `break_glass` role that asked to skip them (`breakGlass: true`). */
export const breakGlassSchema = z.object({ by: z.string(), role: z.enum(ROLES), at: z.string() });

/** The approvals a run needs and has, as `GET /runs/{id}` shows them; null on a run no approval applies to. */
export const runApprovalSchema = z.object({
  /** Distinct tokens that must approve. */
  required: z.number().int().min(1),
  /** The roles whose tokens may approve or reject. */
  fromRoles: z.array(z.enum(ROLES)),
  /** Whether the run's author may approve it. */
  authorMayApprove: z.boolean(),
  /** The approvals and the rejection so far, oldest first (approvals count per distinct token name). */
  decisions: z.array(approvalDecisionSchema),
  /** Since when it waits (`needs-approval`), and until when: afterwards it is discarded (`cancelled`). */
  waitingSince: z.string().nullable(),
  expiresAt: z.string().nullable(),
  /** The release its preview compared with (the approval holds while it is still the stack's latest). */
  basedOnRevision: z.number().int().nullable(),
  /** Set when a `break_glass` token skipped the approvals: recorded, notified (`run.break_glass`). */
  breakGlass: breakGlassSchema.nullable(),
});
export type RunApproval = z.infer<typeof runApprovalSchema>;

export const CHECK_STAGES = ['after_preview', 'before_apply'] as const;
export type CheckStage = (typeof CHECK_STAGES)[number];
export const CHECK_ENFORCEMENTS = ['advisory', 'mandatory'] as const;
export type CheckEnforcement = (typeof CHECK_ENFORCEMENTS)[number];
/** `failed` includes a check that timed out or could not be run (its message says which). */
export const CHECK_STATUSES = ['passed', 'failed'] as const;

/** The bytes of a check's message kept at the most (a command's last lines, an endpoint's message). */
export const MAX_CHECK_MESSAGE_BYTES = 4096;

/** One check's result, as the run shows it. */
export const checkResultSchema = z.object({
  name: z.string(),
  stage: z.enum(CHECK_STAGES),
  enforcement: z.enum(CHECK_ENFORCEMENTS),
  status: z.enum(CHECK_STATUSES),
  /** The endpoint's `message`, or a command's exit code and last lines; why it failed to run or timed out. */
  message: z.string(),
  durationMs: z.number().int().min(0),
  at: z.string(),
});
export type CheckResult = z.infer<typeof checkResultSchema>;

/** An approval as a release records it (the run's approvals that let it apply). */
export const releaseApprovalSchema = z.object({ by: z.string(), at: z.string(), comment: z.string().nullable() });
