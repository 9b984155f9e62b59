import { describe, expect, it } from 'vitest';
import { runSchema, type Run } from '../../../src/api/index.js';
import {
  approvedText,
  indentedLines,
  rejectedText,
  rejectionText,
  runText,
  waitingText,
} from '../../../src/cli/remote/run-text.js';

/** A run as the server answers it (checked against the API's schema), with `over` on top. */
function run(over: Partial<Run> = {}): Run {
  return runSchema.parse({
    id: 'r-1',
    type: 'apply',
    project: 'shop',
    stack: 'prod',
    status: 'needs-approval',
    createdBy: 'ci',
    createdAt: '2026-11-27T02:00:00.000Z',
    startedAt: '2026-11-27T02:00:01.000Z',
    finishedAt: null,
    queuePosition: null,
    blockedBy: null,
    releaseRevision: null,
    error: null,
    options: {},
    commit: null,
    trigger: { kind: 'api', delivery: null, ref: null },
    approval: {
      required: 2,
      fromRoles: ['apply', 'admin'],
      authorMayApprove: false,
      decisions: [],
      waitingSince: '2026-11-27T02:00:05.000Z',
      expiresAt: '2026-12-04T02:00:05.000Z',
      basedOnRevision: 3,
      breakGlass: null,
    },
    checks: [],
    actions: { cancelable: true, approvable: true, rejectable: true },
    ...over,
  });
}

const alice = {
  by: 'alice',
  role: 'apply',
  at: '2026-11-27T02:10:00.000Z',
  decision: 'approved',
  comment: 'looks fine',
} as const;

const conftest = {
  name: 'conftest',
  stage: 'after_preview',
  enforcement: 'advisory',
  status: 'failed',
  message: 'exit 1\nFAIL - web:db - deletes a database\n\n',
  durationMs: 120,
  at: '2026-11-27T02:00:04.000Z',
} as const;

describe('a run waiting for approval, as the CLI says it', () => {
  it('names the run and the command that approves it, then what it needs, until when, and the checks', () => {
    expect(waitingText(run({ checks: [conftest] })).split('\n')).toEqual([
      'waiting for approval: run r-1 (kapps runs approve r-1)',
      "  0 of 2 approvals so far, from a token of role apply or admin (not the run's author); discarded if not decided by 2026-12-04T02:00:05.000Z",
      '  check conftest (after_preview, advisory): failed in 120 ms',
      '      exit 1',
      '      FAIL - web:db - deletes a database',
    ]);
    const approvedOnce = run({
      approval: { ...run().approval!, required: 1, authorMayApprove: true, decisions: [alice] },
    });
    expect(waitingText(approvedOnce).split('\n').slice(1)).toEqual([
      '  1 of 1 approval so far, from a token of role apply or admin; discarded if not decided by 2026-12-04T02:00:05.000Z',
      '  approved by alice (apply) at 2026-11-27T02:10:00.000Z: looks fine',
    ]);
  });

  it('prints what a decision did with the run the server answered', () => {
    expect(approvedText(run({ approval: { ...run().approval!, decisions: [alice] } }))).toBe(
      'approved run r-1 (1 of 2 approvals)',
    );
    expect(approvedText(run({ status: 'queued', queuePosition: 1 }))).toBe('run r-1 is approved and queued to apply');
    expect(approvedText(run({ status: 'stale', error: 'the stack changed' }))).toBe(
      'approved run r-1; it is stale: the stack changed',
    );
    expect(rejectedText(run({ status: 'rejected' }))).toBe('rejected run r-1');
  });

  it('counts approvals per distinct token name', () => {
    const twice = { ...alice, at: '2026-11-27T02:11:00.000Z' };
    expect(approvedText(run({ approval: { ...run().approval!, decisions: [alice, twice] } }))).toBe(
      'approved run r-1 (1 of 2 approvals)',
    );
  });

  it('says who rejected a run and why', () => {
    const bob = {
      by: 'bob',
      role: 'admin',
      at: '2026-11-27T02:12:00.000Z',
      decision: 'rejected',
      comment: 'not now',
    } as const;
    expect(rejectionText(run({ status: 'rejected', approval: { ...run().approval!, decisions: [alice, bob] } }))).toBe(
      'rejected by bob (admin): not now',
    );
    expect(rejectionText(run({ status: 'rejected', error: 'rejected by bob' }))).toBe('rejected: rejected by bob');
  });
});

describe('kapps runs show', () => {
  it('prints the approval, its decisions, the waiting time and the checks with their messages', () => {
    const bob = {
      by: 'bob',
      role: 'admin',
      at: '2026-11-27T02:12:00.000Z',
      decision: 'approved',
      comment: null,
    } as const;
    const passed = {
      ...conftest,
      name: 'opa',
      stage: 'before_apply',
      enforcement: 'mandatory',
      status: 'passed',
      message: '',
    } as const;
    const text = runText(
      run({ approval: { ...run().approval!, decisions: [alice, bob] }, checks: [conftest, passed] }),
    );
    expect(text).toContain(
      "\napproval:        2 of 2 approvals, from a token of role apply or admin (not the run's author)\n",
    );
    expect(text).toContain('\nbasedOnRevision: 3\n');
    expect(text).toContain('\nwaitingSince:    2026-11-27T02:00:05.000Z\n');
    expect(text).toContain('\nexpiresAt:       2026-12-04T02:00:05.000Z\n');
    expect(text).toContain('\nactions:         cancel, approve, reject\n');
    expect(text.split('decisions:\n')[1]).toBe(
      [
        '  approved by alice (apply) at 2026-11-27T02:10:00.000Z: looks fine',
        '  approved by bob (admin) at 2026-11-27T02:12:00.000Z',
        'checks:',
        '  conftest (after_preview, advisory): failed in 120 ms',
        '    exit 1',
        '    FAIL - web:db - deletes a database',
        '  opa (before_apply, mandatory): passed in 120 ms',
        '',
      ].join('\n'),
    );
  });

  it('says a break glass, and prints nothing of approvals or checks for a run they do not apply to', () => {
    const glass = runText(
      run({
        status: 'succeeded',
        approval: {
          ...run().approval!,
          waitingSince: null,
          expiresAt: null,
          breakGlass: { by: 'ops', role: 'admin', at: '2026-11-27T02:00:00.000Z' },
        },
        actions: { cancelable: false, approvable: false, rejectable: false },
      }),
    );
    expect(glass).toContain('\nbreakGlass:      approvals skipped by ops (admin) at 2026-11-27T02:00:00.000Z\n');
    expect(glass).not.toMatch(/waitingSince|expiresAt|actions:|decisions:|checks:/);
    const plain = runText(run({ approval: null, status: 'running' }));
    expect(plain).not.toMatch(/approval|decisions|checks|actions/);
    expect(plain).toContain('status:          running\n');
  });

  it('shows what people wrote with its control characters replaced', () => {
    const sneaky = { ...alice, comment: 'ok\u001b[2J\u001b]0;pwned\u0007 fine' };
    const text = runText(run({ approval: { ...run().approval!, decisions: [sneaky] } }));
    // eslint-disable-next-line no-control-regex -- no control character may reach the terminal
    expect(text).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f]/);
    expect(text).toContain('at 2026-11-27T02:10:00.000Z: ok [2J ]0;pwned  fine');
  });
});

describe("a run's error on stderr", () => {
  it('keeps its lines, indents those after the first, and replaces control characters', () => {
    expect(indentedLines('check freeze failed: exit 3\nchange freeze\u001b[31m until Monday\n')).toBe(
      'check freeze failed: exit 3\n  change freeze [31m until Monday',
    );
    expect(indentedLines('one line')).toBe('one line');
  });
});
