/**
 * Names that become one directory of the workspace (stack names, manifest ids, kapp ids, source ids) must be a
 * single path component: `<workspace>/<manifest>/<kapp>/<source>` must never climb out of the workspace or reach
 * into another kapp's directory. Every name Sugarkube's own samples and kapps use stays valid.
 */

/**
 * Why `name` cannot be used as a directory name, or undefined when it can: it must not be empty, `.` or `..`, and
 * must not contain `/`, `\`, a NUL or another control character, nor start with `-` (it would read as an option
 * to the tools that get workspace paths).
 */
export function nameProblem(name: string): string | undefined {
  if (name === '') return 'is empty';
  if (name === '.' || name === '..') return `is \`${name}\``;
  if (name.includes('/')) return 'contains `/`';
  if (name.includes('\\')) return 'contains `\\`';
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(name)) return 'contains a control character';
  if (name.startsWith('-')) return 'starts with `-`';
  return undefined;
}

/** The hint shown with a bad name. */
export const NAME_HINT =
  'it names a directory of the workspace: use letters, digits, `-` and `_` (not `/`, `\\`, `..`, nor a leading `-`)';
