/**
 * Selecting kapps with `-i/--include` and `-x/--exclude`, and the sub-graph a command works on: the selected
 * kapps plus every ancestor (ancestors provide the outputs their dependants read).
 */
import { warning, type Diagnostic } from '../diagnostics/diagnostic.js';
import { ConfigError, UsageError } from '../diagnostics/errors.js';
import type { KappDag } from './dag.js';
import { closestMatch, suggest } from '../diagnostics/did-you-mean.js';

/** A parsed selector: `manifest:kapp`, or `manifest:*` for every kapp of the manifest. */
export interface Selector {
  /** As given on the command line. */
  readonly text: string;
  readonly manifestId: string;
  /** A kapp id, or `*`. */
  readonly kappId: string;
}

/** Parse a selector; anything but exactly `manifest:kapp` or `manifest:*` (both parts non-empty) is a usage error. */
export function parseSelector(text: string): Selector {
  const parts = text.split(':');
  const [manifestId = '', kappId = ''] = parts;
  if (parts.length !== 2 || manifestId === '' || kappId === '') {
    throw new UsageError(
      `invalid selector '${text}': a selector is 'manifest-id:kapp-id' or 'manifest-id:*' (fully-qualified, no other wildcards)`,
    );
  }
  return { text, manifestId, kappId };
}

/** Which kapps to select and whether their ancestors are processed too. */
export interface SelectOptions {
  /** Include selectors; none means every kapp. */
  readonly include?: readonly string[];
  /** Exclude selectors, applied after the includes. */
  readonly exclude?: readonly string[];
  /** Process the ancestors of selected kapps as well (`--parents`). */
  readonly parents?: boolean;
}

/** A kapp of the sub-graph. */
export interface PlanNode {
  /** `manifest:kapp`. */
  readonly id: string;
  readonly manifestId: string;
  readonly kappId: string;
  /** Ids this kapp depends on, as declared; all are in the sub-graph. */
  readonly dependsOn: readonly string[];
  /** Matched by the selectors. */
  readonly selected: boolean;
  /** Will be planned/applied: (selected, or an ancestor with `--parents`) and its conditions hold. */
  readonly processed: boolean;
  /** The kapp's own conditions all hold. */
  readonly conditionsOk: boolean;
}

/** The outcome of a selection. */
export interface Selection {
  /** Selected ids in stack order (manifest order, then kapp order), never selector order. */
  readonly selected: readonly string[];
  /** The selected kapps and all their ancestors, in stack order. */
  readonly nodes: readonly PlanNode[];
  /** Selectors that matched no kapp. */
  readonly warnings: readonly Diagnostic[];
}

/** Matches kapps against selectors in constant time per kapp, remembering which selectors matched something. */
class Matcher {
  private readonly byKey = new Map<string, Selector[]>();
  readonly used = new Set<Selector>();

  constructor(readonly selectors: readonly Selector[]) {
    for (const s of selectors) {
      const key = s.kappId === '*' ? `manifest\u0000${s.manifestId}` : `kapp\u0000${s.manifestId}:${s.kappId}`;
      this.byKey.set(key, [...(this.byKey.get(key) ?? []), s]);
    }
  }

  matches(manifestId: string, id: string): boolean {
    const hits = [
      ...(this.byKey.get(`kapp\u0000${id}`) ?? []),
      ...(this.byKey.get(`manifest\u0000${manifestId}`) ?? []),
    ];
    for (const s of hits) this.used.add(s);
    return hits.length > 0;
  }
}

function quoteList(texts: readonly string[], none: string): string {
  return texts.length === 0 ? none : texts.map((t) => `'${t}'`).join(', ');
}

/** The selectors of `matcher` that matched no kapp, each with the closest existing id or manifest when there is one. */
function unmatched(matcher: Matcher, dag: KappDag): { selector: Selector; hint?: string }[] {
  const manifestIds = [...new Set(dag.ids.map((id) => dag.node(id)?.manifestId ?? ''))];
  return matcher.selectors
    .filter((s) => !matcher.used.has(s))
    .map((s) => {
      if (s.manifestId.includes('*') || (s.kappId.includes('*') && s.kappId !== '*')) {
        return { selector: s, hint: "'*' is a wildcard only as the whole kapp part, as in 'manifest-id:*'" };
      }
      const close = s.kappId === '*' ? closestMatch(s.manifestId, manifestIds) : closestMatch(s.text, dag.ids);
      return close === undefined
        ? { selector: s }
        : { selector: s, hint: suggest(s.kappId === '*' ? `${close}:*` : close) };
    });
}

function unmatchedWarnings(kind: string, matcher: Matcher, dag: KappDag): Diagnostic[] {
  return unmatched(matcher, dag).map(({ selector, hint }) =>
    warning(`${kind} selector '${selector.text}' matches no kapp`, undefined, hint ? { hint } : {}),
  );
}

/**
 * Select kapps of `dag` and build the sub-graph. A kapp is a candidate when there are no include selectors or it
 * matches one, and is selected unless it matches an exclude selector. An ancestor of a selected kapp is in the
 * sub-graph even when not processed. Throws a `UsageError` for a malformed selector or when nothing is selected
 * (a `ConfigError` when the stack has no kapps and no selector was given).
 */
export function selectKapps(dag: KappDag, options: SelectOptions = {}): Selection {
  const include = new Matcher((options.include ?? []).map(parseSelector));
  const exclude = new Matcher((options.exclude ?? []).map(parseSelector));
  const everything = include.selectors.length === 0 && exclude.selectors.length === 0;
  const selected: string[] = everything ? [...dag.ids] : [];
  if (!everything) {
    for (const id of dag.ids) {
      const node = dag.node(id);
      if (!node) continue;
      // Both matchers see every kapp, so a selector's "matches no kapp" warning is never a side effect of the other.
      const included = include.matches(node.manifestId, id) || include.selectors.length === 0;
      const excluded = exclude.matches(node.manifestId, id);
      if (included && !excluded) selected.push(id);
    }
  }
  if (selected.length === 0) {
    const message = `nothing was matched by including ${quoteList(options.include ?? [], 'everything')} and excluding ${quoteList(options.exclude ?? [], 'nothing')}`;
    if (include.selectors.length === 0 && exclude.selectors.length === 0) {
      throw new ConfigError([
        { severity: 'error', message: 'the stack has no kapps: it lists no manifest with kapps' },
      ]);
    }
    // The suggestions for include selectors that matched nothing say what was probably meant.
    const hints = unmatched(include, dag).flatMap((u) => (u.hint ? [`'${u.selector.text}': ${u.hint}`] : []));
    throw new UsageError(hints.length ? `${message} (${hints.join('; ')})` : message);
  }

  const isSelected = new Set(selected);
  const inSubGraph = new Set(selected);
  if (!everything) {
    const queue = [...selected];
    for (let head = 0; head < queue.length; head++) {
      for (const parent of dag.parentsOf(queue[head] ?? '')) {
        if (!inSubGraph.has(parent)) {
          inSubGraph.add(parent);
          queue.push(parent);
        }
      }
    }
  }

  const nodes: PlanNode[] = [];
  for (const id of dag.ids) {
    const node = dag.node(id);
    if (!node || !inSubGraph.has(id)) continue;
    const wanted = isSelected.has(id) || options.parents === true;
    nodes.push({
      id,
      manifestId: node.manifestId,
      kappId: node.kappId,
      dependsOn: dag.parents(id),
      selected: isSelected.has(id),
      processed: wanted && node.conditionsOk,
      conditionsOk: node.conditionsOk,
    });
  }
  const warnings = [...unmatchedWarnings('include', include, dag), ...unmatchedWarnings('exclude', exclude, dag)];
  return { selected, nodes, warnings };
}
