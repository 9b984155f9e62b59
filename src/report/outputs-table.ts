/**
 * The outputs `kapps output` loaded, printed after the run as one line per value: `<kapp>  <output>  <value>`. A
 * Terraform `output -json` document (a map of `{value, sensitive, …}`) gives a line per Terraform output, and its
 * sensitive ones are masked; an output declared `sensitive: true` is never shown (it is not even kept in memory after
 * the run). Values are shown as compact JSON, cut at 100 characters.
 */
import { toJS, type GoMap } from '../go-value/value.js';
import type { KappRole } from '../vocabulary.js';

/** What the table reads of a kapp's result (a run's `KappResult`). */
export interface KappOutputs {
  readonly id: string;
  readonly role: KappRole;
  /** Non-sensitive outputs loaded in this run, by output id. */
  readonly outputs?: GoMap;
}

const MAX = 100;

function show(value: unknown): string {
  const text = typeof value === 'string' ? value : (JSON.stringify(value) ?? 'null');
  const line = text.replaceAll('\n', '\\n');
  return line.length > MAX ? `${line.slice(0, MAX - 1)}…` : line;
}

function isTerraformDocument(v: unknown): v is Record<string, { value?: unknown; sensitive?: unknown }> {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return false;
  const entries = Object.values(v as Record<string, unknown>);
  return (
    entries.length > 0 &&
    entries.every((e) => e !== null && typeof e === 'object' && !Array.isArray(e) && 'value' in e && 'type' in e)
  );
}

/**
 * The lines to print, or [] when no kapp loaded an output. `sensitiveIds(kapp)` lists the kapp's outputs declared
 * sensitive.
 */
export function outputLines(
  results: Iterable<KappOutputs>,
  sensitiveIds: (kapp: string) => readonly string[],
): string[] {
  const rows: [string, string, string][] = [];
  for (const r of results) {
    if (r.role !== 'selected') continue;
    for (const [id, value] of Object.entries(r.outputs ?? {})) {
      const js = toJS(value);
      if (isTerraformDocument(js)) {
        for (const [name, o] of Object.entries(js)) {
          rows.push([r.id, `${id}.${name}`, o.sensitive === true ? '(sensitive)' : show(o.value)]);
        }
      } else rows.push([r.id, id, show(js)]);
    }
    for (const id of sensitiveIds(r.id)) rows.push([r.id, id, '(sensitive)']);
  }
  if (rows.length === 0) return [];
  const w0 = Math.max(4, ...rows.map((r) => r[0].length));
  const w1 = Math.max(6, ...rows.map((r) => r[1].length));
  return [
    `${'KAPP'.padEnd(w0)}  ${'OUTPUT'.padEnd(w1)}  VALUE`,
    ...rows.map(([k, o, v]) => `${k.padEnd(w0)}  ${o.padEnd(w1)}  ${v}`),
  ];
}
