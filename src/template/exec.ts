/**
 * The template executor: walks a parsed tree against data the way Go's text/template/exec.go does — text, actions,
 * if/with/range (with break and continue), nested templates — on top of the expression evaluation of
 * `exec-eval.ts`. An exec error discards the partial output.
 */
import { TemplateError } from './errors.js';
import type { ExecOptions, ExecTemplate } from './exec-eval.js';
import { elemsAreIface, Evaluator, ExecFailure } from './exec-eval.js';
import type { Val } from './exec-value.js';
import { INVALID } from './exec-value.js';
import { formatValue } from './fmt.js';
import { stepLimitError, withRenderBudget } from './limits.js';
import { sortedEntries } from './map-order.js';
import type { BranchNode, ListNode, Node, TemplateNode } from './nodes.js';
import { nodeString } from './nodes.js';
import { quoteGo } from './quote.js';
import type { GoValue } from '../go-value/value.js';
import { GoIfaceMap, GoOpaque, isTrue } from '../go-value/value.js';

export type { ExecOptions, ExecTemplate } from './exec-eval.js';
export { lineAndByteColumn } from './exec-eval.js';

/** Nesting limit for {{template}} calls; Go allows 100000, JS stacks allow fewer. Go's message is kept. */
const MAX_TEMPLATE_DEPTH = 1000;
const GO_MAX_EXEC_DEPTH = 100000;

const enum Flow {
  Normal,
  Break,
  Continue,
}

/** One execution: the output so far and the statement walk. */
class State extends Evaluator {
  out = '';

  walk(dot: Val, node: Node): Flow {
    this.node = node;
    const overLimit = stepLimitError(this.out.length);
    if (overLimit !== null) this.errorf(overLimit);
    switch (node.type) {
      case 'action': {
        const val = this.evalPipeline(dot, node.pipe);
        if (node.pipe.decl.length === 0) {
          const start = this.out.length;
          this.printValue(node, val);
          // The text printed from a sensitive value is sensitive, whatever its form (a float's Go text, a map).
          if (this.watch && val !== INVALID && val !== null && this.watch.isSensitive(val))
            this.watch.derived(this.out.slice(start));
        }
        return Flow.Normal;
      }
      case 'break':
        return Flow.Break;
      case 'continue':
        return Flow.Continue;
      case 'if':
      case 'with':
        return this.walkIfOrWith(dot, node);
      case 'list':
        for (const n of node.nodes) {
          const f = this.walk(dot, n);
          if (f !== Flow.Normal) return f;
        }
        return Flow.Normal;
      case 'range':
        return this.walkRange(dot, node);
      case 'template':
        this.walkTemplate(dot, node);
        return Flow.Normal;
      case 'text':
        this.out += node.text;
        return Flow.Normal;
      default:
        this.errorf(`unknown node: ${nodeString(node)}`);
    }
  }

  private walkIfOrWith(dot: Val, node: BranchNode): Flow {
    const mark = this.vars.length;
    try {
      const val = this.evalPipeline(dot, node.pipe);
      const t = val !== INVALID && isTrue(val);
      if (t) {
        if (node.type === 'with') {
          const saved = this.dotIface;
          this.dotIface = false;
          try {
            return this.walk(val, node.list);
          } finally {
            this.dotIface = saved;
          }
        }
        return this.walk(dot, node.list);
      } else if (node.elseList) return this.walk(dot, node.elseList);
      return Flow.Normal;
    } finally {
      this.vars.length = mark;
    }
  }

  private walkRange(dot: Val, r: BranchNode): Flow {
    this.node = r;
    const outerMark = this.vars.length;
    try {
      const val = this.evalPipeline(dot, r.pipe);
      const mark = this.vars.length;
      const decls = r.pipe.decl.length;
      const savedIface = this.dotIface;
      // Returns true when the loop must stop ({{break}}).
      const oneIteration = (index: Val, indexIface: boolean, elem: Val, elemIface: boolean): boolean => {
        if (decls > 0) this.setTopVar(1, elem, elemIface);
        if (decls > 1) this.setTopVar(2, index, indexIface);
        this.dotIface = elemIface;
        try {
          return this.walk(elem, r.list) === Flow.Break;
        } finally {
          this.dotIface = savedIface;
          this.vars.length = mark;
        }
      };
      if (val !== INVALID && val !== null && typeof val === 'object' && !(val instanceof GoOpaque)) {
        const iface = elemsAreIface(val);
        if (Array.isArray(val)) {
          if (val.length > 0) {
            for (let i = 0; i < val.length; i++) {
              if (oneIteration(BigInt(i), false, val[i] ?? null, iface)) break;
            }
            return Flow.Normal;
          }
        } else {
          const entries = sortedEntries(val);
          if (entries.length > 0) {
            const keyIface = val instanceof GoIfaceMap;
            for (const [k, v] of entries) if (oneIteration(k, keyIface, v, iface)) break;
            return Flow.Normal;
          }
        }
      } else if (val !== INVALID && val !== null) {
        this.errorf(`range can't iterate over ${formatValue(val)}`);
      }
      if (r.elseList) return this.walk(dot, r.elseList);
      return Flow.Normal;
    } finally {
      this.vars.length = outerMark;
    }
  }

  private walkTemplate(dot: Val, t: TemplateNode): void {
    this.node = t;
    const root = this.tmpl.trees.get(t.name);
    if (root === undefined) this.errorf(`template ${quoteGo(t.name)} not defined`);
    if (this.depth >= MAX_TEMPLATE_DEPTH) this.errorf(`exceeded maximum template depth (${GO_MAX_EXEC_DEPTH})`);
    const newDot = this.evalPipeline(dot, t.pipe);
    const saved = { vars: this.vars, depth: this.depth, name: this.tmplName, iface: this.dotIface, node: this.node };
    this.depth++;
    this.tmplName = t.name;
    this.vars = [{ name: '$', value: newDot, iface: false }];
    this.dotIface = false;
    try {
      this.walk(newDot, root);
    } finally {
      this.vars = saved.vars;
      this.depth = saved.depth;
      this.tmplName = saved.name;
      this.dotIface = saved.iface;
    }
  }

  private printValue(n: Node, v: Val): void {
    this.node = n;
    if (v === INVALID || v === null) this.out += '<no value>';
    else this.out += formatValue(v);
  }
}

/**
 * Execute the template named `tmpl.name` of a parsed text against `data`. Returns the output; throws TemplateError
 * (an exec error discards partial output, as Sugarkube does).
 */
export function executeTemplate(tmpl: ExecTemplate, data: GoValue, opts: ExecOptions): string {
  return withRenderBudget(() => executeWithinBudget(tmpl, data, opts));
}

function executeWithinBudget(tmpl: ExecTemplate, data: GoValue, opts: ExecOptions): string {
  const s = new State(tmpl, opts);
  const dot: Val = data === null ? INVALID : data;
  s.vars = [{ name: '$', value: dot, iface: false }];
  try {
    const root: ListNode | undefined = tmpl.trees.get(tmpl.name);
    if (root === undefined) return s.errorf(`${quoteGo(tmpl.name)} is an incomplete or empty template`);
    s.walk(dot, root);
    const overLimit = stepLimitError(s.out.length);
    if (overLimit !== null) s.errorf(overLimit);
    return s.out;
  } catch (e) {
    if (e instanceof ExecFailure) throw e.error;
    if (e instanceof TemplateError) throw e;
    if (e instanceof RangeError) {
      try {
        s.errorf(`exceeded maximum template depth (${GO_MAX_EXEC_DEPTH})`);
      } catch (inner) {
        if (inner instanceof ExecFailure) throw inner.error;
      }
    }
    const message = e instanceof Error ? e.message : String(e);
    try {
      s.errorf(`internal error: ${message}`);
    } catch (inner) {
      if (inner instanceof ExecFailure) throw inner.error;
    }
    throw new TemplateError(`template: ${tmpl.name}: internal error: ${message}`, 'exec', tmpl.name, 1, 1);
  }
}
