/**
 * The gate as one run meets it: the approval a submission is stored with (every path calls `gatedRun`), the one
 * exception (break glass), who may decide, what the release records, and the rows of a destroy's preview.
 */
import { describe, expect, it } from 'vitest';
import type { ProjectEntry } from '../../../src/server/config.js';
import { deleteRows } from '../../../src/engine/preview.js';
import type { NewRun, StoredRun } from '../../../src/server/queue/run-store.js';
import {
  decisionActions,
  GateRefused,
  gatedRun,
  isApproved,
  mayNotDecide,
  releaseApprovals,
  releaseMoved,
} from '../../../src/server/runs/gate.js';

const policy = { required: 2, fromRoles: ['apply', 'admin'] as const, authorMayApprove: false };
const project: ProjectEntry = {
  name: 'shop',
  stackFile: '/x/stacks.yaml',
  onPush: 'preview',
  notify: [],
  gate: {
    approvals: { ...policy, fromRoles: [...policy.fromRoles], expireAfterSeconds: 60, breakGlass: ['admin'] },
    stacks: {
      dev: { approvals: { ...policy, fromRoles: ['apply'], required: 0, expireAfterSeconds: 60, breakGlass: [] } },
    },
  },
};
const run = (over: Partial<NewRun> = {}): NewRun => ({
  type: 'apply',
  project: 'shop',
  stack: 'prod',
  createdBy: 'alice',
  options: {},
  ...over,
});
const at = new Date('2026-01-02T03:04:05.000Z');

function refusal(f: () => unknown): GateRefused {
  try {
    f();
  } catch (error) {
    if (error instanceof GateRefused) return error;
    throw error;
  }
  throw new Error('not refused');
}

describe('gatedRun', () => {
  it('stores an apply, destroy or rollback of a gated stack with the policy, no decisions, not waiting', () => {
    for (const type of ['apply', 'destroy', 'rollback'] as const) {
      expect(gatedRun(project, run({ type })).approval).toEqual({
        required: 2,
        fromRoles: ['apply', 'admin'],
        authorMayApprove: false,
        decisions: [],
        waitingSince: null,
        expiresAt: null,
        basedOnRevision: null,
        breakGlass: null,
      });
    }
  });

  it('holds no preview, generate or drift run, nor a stack whose own approvals require none', () => {
    for (const type of ['preview', 'generate', 'drift'] as const)
      expect(gatedRun(project, run({ type })).approval).toBeNull();
    expect(gatedRun(project, run({ stack: 'dev' })).approval).toBeNull();
    expect(gatedRun(undefined, run()).approval).toBeNull();
  });

  it('lets a break-glass role skip the approvals, recorded with who and when', () => {
    const gated = gatedRun(project, run({ options: { breakGlass: true } }), { name: 'ops', role: 'admin' }, at);
    expect(gated.approval?.breakGlass).toEqual({ by: 'ops', role: 'admin', at: '2026-01-02T03:04:05.000Z' });
    expect(releaseApprovals({ approval: gated.approval ?? null })).toEqual({
      breakGlass: { by: 'ops', role: 'admin', at: '2026-01-02T03:04:05.000Z' },
    });
  });

  it('refuses break glass to other roles (403), to the server itself, and where there is nothing to skip (400)', () => {
    const glass = { options: { breakGlass: true } };
    const other = refusal(() => gatedRun(project, run(glass), { name: 'alice', role: 'apply' }));
    expect([other.kind, other.message]).toEqual([
      'forbidden',
      'alice has role apply; approvals.break_glass of shop/prod allows admin to skip its approvals',
    ]);
    expect(refusal(() => gatedRun(project, run(glass))).kind).toBe('forbidden');
    const preview = refusal(() =>
      gatedRun(project, run({ ...glass, type: 'preview' }), { name: 'ops', role: 'admin' }),
    );
    expect([preview.kind, preview.field]).toEqual(['invalid', 'body.breakGlass']);
    const none = refusal(() => gatedRun(project, run({ ...glass, stack: 'dev' }), { name: 'ops', role: 'admin' }));
    expect(none.message).toBe('shop/dev requires no approvals: there are none to skip');
  });
});

describe('deciding', () => {
  const waiting = (decisions: NonNullable<StoredRun['approval']>['decisions'] = []): StoredRun =>
    ({
      id: 'r1',
      type: 'apply',
      project: 'shop',
      stack: 'prod',
      status: 'needs-approval',
      createdBy: 'alice',
      approval: { ...gatedRun(project, run()).approval!, decisions, waitingSince: at.toISOString() },
    }) as StoredRun;
  const approved = (by: string) =>
    ({ by, role: 'apply', at: at.toISOString(), decision: 'approved', comment: null }) as const;

  it('refuses the author and roles outside from_roles; counts approvals per distinct token', () => {
    expect(mayNotDecide(waiting(), { name: 'alice', role: 'apply' }, 'approve')).toBe(
      'the author of a run may not approve it (approvals.author_may_approve is false)',
    );
    expect(mayNotDecide(waiting(), { name: 'carol', role: 'plan' }, 'reject')).toBe(
      'carol has role plan; approvals of shop/prod come from apply, admin',
    );
    expect(mayNotDecide(waiting(), { name: 'bob', role: 'apply' }, 'approve')).toBeUndefined();
    expect(decisionActions(waiting([approved('bob')]), { name: 'bob', role: 'apply' })).toEqual({
      approvable: false,
      rejectable: true,
    });
    expect(decisionActions(waiting(), { name: 'alice', role: 'apply' })).toEqual({
      approvable: false,
      rejectable: false,
    });
    expect(isApproved(waiting([approved('bob'), approved('bob')]))).toBe(false);
    const both = waiting([approved('bob'), approved('dave')]);
    expect(isApproved(both)).toBe(true);
    expect(releaseApprovals(both)).toEqual({
      approvals: [
        { by: 'bob', at: at.toISOString(), comment: null },
        { by: 'dave', at: at.toISOString(), comment: null },
      ],
    });
  });

  it('says why a waiting run is stale', () => {
    expect(releaseMoved(3, 4)).toBe(
      "the stack's release changed while it waited: revision 3 then, 4 now; a new preview and new approvals are needed",
    );
  });
});

describe('deleteRows', () => {
  it('lists the installed kapps among those processed, each Delete, in the order a delete takes them', () => {
    const entry = (status: string) => ({ status }) as never;
    expect(
      deleteRows(['m:a', 'm:b', 'm:c', 'm:d'], {
        'm:a': entry('installed'),
        'm:b': entry('deleted'),
        'm:c': entry('installed'),
      }),
    ).toEqual([
      { id: 'm:c', action: 'Delete' },
      { id: 'm:a', action: 'Delete' },
    ]);
    expect(deleteRows(['m:a'], undefined)).toEqual([]);
  });
});
