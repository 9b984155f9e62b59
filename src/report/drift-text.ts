/** A drift report as text: what `kapps drift` prints and what a server's drift run says in its log. */
import type { DriftReport } from '../release/drift.js';
import { formatChangeValue } from '../release/spec-diff.js';

/** The one-line verdict of a check. */
export function driftVerdict(report: DriftReport): string {
  const against = report.basedOnRevision === null ? 'no release' : `release ${report.basedOnRevision}`;
  const stack = `${report.project}/${report.stack}`;
  switch (report.state) {
    case 'inSync':
      return `In sync: the ${report.read.length} kapp(s) read of ${stack} match ${against}.`;
    case 'drifted': {
      const n = report.kapps.filter((k) => k.state === 'drifted').length;
      return `Drifted: ${n} kapp(s) of ${stack} differ from ${against}.`;
    }
    case 'unknown':
      return `Unknown: ${report.reason ?? 'the live state could not be read'} (${stack}, against ${against}).`;
  }
}

/** The whole report: the verdict, each kapp's changed outputs (recorded → read), and the pending changes. */
export function formatDriftReport(report: DriftReport): string {
  const lines = [driftVerdict(report)];
  for (const kapp of report.kapps) {
    if (kapp.state === 'unknown') {
      lines.push(`  ${kapp.id}: unknown: ${kapp.reason ?? 'not read'}`);
      continue;
    }
    lines.push(`  ${kapp.id}: ${kapp.state === 'drifted' ? 'drifted' : 'in sync (differences left out)'}`);
    for (const change of kapp.changes) {
      lines.push(
        `    ${change.path.join('.')}: ${formatChangeValue(change.from)} recorded, ${formatChangeValue(change.to)} read`,
      );
    }
    if (kapp.ignored.length) lines.push(`    ignored: ${kapp.ignored.map((p) => p.join('.')).join(', ')}`);
    if (kapp.noisy.length) lines.push(`    noisy: ${kapp.noisy.map((p) => p.join('.')).join(', ')}`);
  }
  if (report.pending.length) {
    lines.push(
      `Pending changes (the configuration differs from the release; not drift): ${report.pending.map((p) => `${p.id} ${p.action}`).join(', ')}`,
    );
  }
  return `${lines.join('\n')}\n`;
}
