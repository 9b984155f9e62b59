/**
 * Expression evaluation of the executor (Go's evalPipeline, evalCommand, evalField, evalCall, evalArg and
 * validateType): pipelines, field chains, function calls with text/template's argument checking, and the "current
 * node" Go reports in errors. `exec.ts` adds the statement walk on top.
 */
import type { Builtin } from './builtins.js';
import { builtins, truth } from './builtins.js';
import { TemplateError } from './errors.js';
import type { Val } from './exec-value.js';
import { INVALID, MISSING } from './exec-value.js';
import { formatFloat } from './fmt.js';
import type {
  ChainNode,
  CommandNode,
  FieldNode,
  IdentifierNode,
  Node,
  NumberNode,
  PipeNode,
  VariableNode,
} from './nodes.js';
import { nodeString } from './nodes.js';
import type { TreeSet } from './parser.js';
import { quoteGo } from './quote.js';
import type { FuncContext, FuncDef, FuncMap, GoType } from './types.js';
import { checkResultValue } from './limits.js';
import { FuncError } from './types.js';
import type { GoValue } from '../go-value/value.js';
import { GoIfaceMap, GoOpaque, goTypeName } from '../go-value/value.js';
import { SELECTORS, type SensitivityWatch } from './sensitivity.js';

const RV = 'reflect.Value';
const IFACE = 'interface {}';

/** Options of one execution. */
export interface ExecOptions {
  /** missingkey=error instead of missingkey=default. */
  readonly strict: boolean;
  /** The function map (FuncMap entries win over builtins). */
  readonly funcs: FuncMap;
  /** What functions may read from the outside world. */
  readonly ctx: FuncContext;
}

/** What a parsed text needs for execution and error positions. */
export interface ExecTemplate {
  readonly text: string;
  readonly name: string;
  readonly trees: TreeSet;
}

/** A template variable. */
export interface Variable {
  readonly name: string;
  value: Val;
  /** The value has static type interface {} (it came out of a []interface{} / map[...]interface{}). */
  iface: boolean;
}

/** A thrown exec error; `executeTemplate` rethrows its TemplateError. */
export class ExecFailure extends Error {
  constructor(readonly error: TemplateError) {
    super(error.message);
  }
}

const encoder = new TextEncoder();

/** Line (1-based) and Go's byte column (0-based) of an index in a text. */
export function lineAndByteColumn(text: string, pos: number): { line: number; col: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = text.indexOf('\n'); i >= 0 && i < pos; i = text.indexOf('\n', i + 1)) {
    line++;
    lineStart = i + 1;
  }
  const prefix = text.slice(lineStart, pos);
  // eslint-disable-next-line no-control-regex
  const col = /^[\x00-\x7f]*$/.test(prefix) ? prefix.length : encoder.encode(prefix).length;
  return { line, col };
}

function canBeNil(typ: GoType): boolean {
  return (
    typ === RV ||
    typ.startsWith('interface') ||
    typ.startsWith('[]') ||
    typ.startsWith('map[') ||
    typ.startsWith('*') ||
    typ.startsWith('func') ||
    typ.startsWith('chan') ||
    typ === 'error'
  );
}

function isIfaceType(typ: GoType): boolean {
  return typ.startsWith('interface');
}

/** Whether the elements of a list or map value have static type interface {}. */
export function elemsAreIface(v: GoValue): boolean {
  return goTypeName(v).endsWith('interface {}');
}

/** A complex128 constant: printed as Go prints it, `(1+2i)`; no arithmetic or comparison support. */
function complexValue(re: number, im: number): GoValue {
  const imText = formatFloat(im, 'g', -1);
  const text = `(${formatFloat(re, 'g', -1)}${imText.startsWith('-') || imText.startsWith('+') ? '' : '+'}${imText}i)`;
  return new GoOpaque('complex128', {}, () => text);
}

function isHexInt(s: string): boolean {
  return s.length > 2 && s[0] === '0' && (s[1] === 'x' || s[1] === 'X') && !/[pP]/.test(s);
}

/** Evaluation state: variables, the current node for errors, and the evaluation of pipelines and arguments. */
export abstract class Evaluator {
  node: Node | null = null;
  vars: Variable[] = [];
  depth = 0;
  tmplName: string;
  /** Whether the current dot has static type interface {} (a range element). */
  dotIface = false;
  /** Whether the last evalField result has static type interface {}. */
  lastIface = false;
  /** Where values computed from sensitive values are reported, while a run watches (see `sensitivity.ts`). */
  readonly watch: SensitivityWatch | undefined;

  constructor(
    readonly tmpl: ExecTemplate,
    readonly opts: ExecOptions,
  ) {
    this.tmplName = tmpl.name;
    this.watch = opts.ctx.watch;
  }

  // --- errors -----------------------------------------------------------------

  errorf(message: string): never {
    const name = this.tmplName;
    if (this.node === null) {
      throw new ExecFailure(new TemplateError(`template: ${name}: ${message}`, 'exec', name, 1, 1));
    }
    const { line, col } = lineAndByteColumn(this.tmpl.text, this.node.pos);
    const text = `template: ${this.tmpl.name}:${line}:${col}: executing ${quoteGo(name)} at <${nodeString(this.node)}>: ${message}`;
    throw new ExecFailure(new TemplateError(text, 'exec', name, line, col + 1));
  }

  // --- variables ----------------------------------------------------------------

  push(name: string, value: Val, iface: boolean): void {
    this.vars.push({ name, value, iface });
  }

  setVar(name: string, value: Val): void {
    for (let i = this.vars.length - 1; i >= 0; i--) {
      const v = this.vars[i];
      if (v && v.name === name) {
        v.value = value;
        v.iface = false;
        return;
      }
    }
    this.errorf(`undefined variable: ${name}`);
  }

  setTopVar(n: number, value: Val, iface: boolean): void {
    const v = this.vars[this.vars.length - n];
    if (v) {
      v.value = value;
      v.iface = iface;
    }
  }

  varLookup(name: string): Variable {
    for (let i = this.vars.length - 1; i >= 0; i--) {
      const v = this.vars[i];
      if (v && v.name === name) return v;
    }
    this.errorf(`undefined variable: ${name}`);
  }

  // --- evaluation ---------------------------------------------------------------------

  /** Evaluate a pipeline, declaring or assigning its variables (Go's evalPipeline). */
  evalPipeline(dot: Val, pipe: PipeNode | null): Val {
    if (pipe === null) return INVALID;
    this.node = pipe;
    let value: Val | typeof MISSING = MISSING;
    for (const cmd of pipe.cmds) {
      value = this.evalCommand(dot, cmd, value);
      // A nil interface result becomes the invalid value (Go's reflect.ValueOf(v.Interface())).
      if (value === null) value = INVALID;
    }
    const result: Val = value === MISSING ? INVALID : value;
    for (const v of pipe.decl) {
      const name = v.ident[0] ?? '$';
      if (pipe.isAssign) this.setVar(name, result);
      else this.push(name, result, false);
    }
    return result;
  }

  private notAFunction(args: readonly Node[], final: Val | typeof MISSING): void {
    if (args.length > 1 || final !== MISSING) {
      this.errorf(`can't give argument to non-function ${nodeString(args[0] as Node)}`);
    }
  }

  private evalCommand(dot: Val, cmd: CommandNode, final: Val | typeof MISSING): Val {
    const args = cmd.args;
    const first = args[0] as Node;
    switch (first.type) {
      case 'field':
        return this.evalFieldNode(dot, first, args, final);
      case 'chain':
        return this.evalChainNode(dot, first, args, final);
      case 'identifier':
        return this.evalFunction(dot, first, cmd, args, final);
      case 'pipe':
        this.notAFunction(args, final);
        return this.evalPipeline(dot, first);
      case 'variable':
        return this.evalVariableNode(dot, first, args, final);
    }
    this.node = first;
    this.notAFunction(args, final);
    switch (first.type) {
      case 'bool':
        return first.value;
      case 'dot':
        return dot;
      case 'nil':
        this.errorf('nil is not a command');
      // falls through (errorf never returns)
      case 'number':
        return this.idealConstant(first);
      case 'string':
        return first.text;
    }
    this.errorf(`can't evaluate command ${quoteGo(nodeString(first))}`);
  }

  private idealConstant(c: NumberNode): Val {
    this.node = c;
    const n = c.num;
    if (n.isComplex) return complexValue(n.float64, n.imag);
    if (n.isFloat && !isHexInt(c.text) && c.text[0] !== "'" && /[.eEpP]/.test(c.text)) return n.float64;
    if (n.isInt) return n.int64;
    if (n.isUint) this.errorf(`${c.text} overflows int`);
    return INVALID;
  }

  private evalFieldNode(dot: Val, field: FieldNode, args: readonly Node[] | null, final: Val | typeof MISSING): Val {
    this.node = field;
    return this.evalFieldChain(dot, dot, this.dotIface, field, field.ident, args, final);
  }

  private evalChainNode(dot: Val, chain: ChainNode, args: readonly Node[] | null, final: Val | typeof MISSING): Val {
    this.node = chain;
    if (chain.field.length === 0) this.errorf('internal error: no fields in evalChainNode');
    if (chain.node.type === 'nil') this.errorf(`indirection through explicit nil in ${nodeString(chain)}`);
    const pipe = this.evalArg(dot, null, chain.node);
    return this.evalFieldChain(dot, pipe, false, chain, chain.field, args, final);
  }

  private evalVariableNode(
    dot: Val,
    variable: VariableNode,
    args: readonly Node[] | null,
    final: Val | typeof MISSING,
  ): Val {
    this.node = variable;
    const v = this.varLookup(variable.ident[0] ?? '$');
    if (variable.ident.length === 1) {
      this.notAFunction(args ?? [], final);
      this.lastIface = v.iface;
      return v.value;
    }
    return this.evalFieldChain(dot, v.value, v.iface, variable, variable.ident.slice(1), args, final);
  }

  private evalFieldChain(
    dot: Val,
    receiver: Val,
    recvIface: boolean,
    node: Node,
    ident: readonly string[],
    args: readonly Node[] | null,
    final: Val | typeof MISSING,
  ): Val {
    const n = ident.length;
    for (let i = 0; i < n - 1; i++) {
      receiver = this.evalField(dot, ident[i] ?? '', node, null, MISSING, receiver, recvIface);
      recvIface = this.lastIface;
    }
    return this.evalField(dot, ident[n - 1] ?? '', node, args, final, receiver, recvIface);
  }

  protected evalField(
    dot: Val,
    fieldName: string,
    node: Node,
    args: readonly Node[] | null,
    final: Val | typeof MISSING,
    receiver: Val,
    recvIface: boolean,
  ): Val {
    this.lastIface = false;
    if (receiver === INVALID) {
      if (this.opts.strict) this.errorf(`nil data; no entry for key ${quoteGo(fieldName)}`);
      return INVALID;
    }
    if (receiver === null) this.errorf(`nil pointer evaluating interface {}.${fieldName}`);
    const typName = recvIface ? IFACE : goTypeName(receiver);
    if (receiver instanceof GoOpaque) {
      if (Object.prototype.hasOwnProperty.call(receiver.members, fieldName)) {
        const member = receiver.members[fieldName] as () => GoValue;
        const def: Builtin = { params: [], call: () => member() };
        return this.evalCall(dot, def, false, node, fieldName, args, final);
      }
      this.errorf(`can't evaluate field ${fieldName} in type ${typName}`);
    }
    const hasArgs = (args !== null && args.length > 1) || final !== MISSING;
    if (receiver instanceof GoIfaceMap) {
      if (hasArgs) this.errorf(`${fieldName} is not a method but has arguments`);
      if (receiver.has(fieldName)) {
        this.lastIface = true;
        return receiver.get(fieldName) ?? null;
      }
      if (this.opts.strict) this.errorf(`map has no entry for key ${quoteGo(fieldName)}`);
      return INVALID;
    }
    if (typeof receiver === 'object' && !Array.isArray(receiver)) {
      if (hasArgs) this.errorf(`${fieldName} is not a method but has arguments`);
      if (Object.prototype.hasOwnProperty.call(receiver, fieldName)) {
        this.lastIface = elemsAreIface(receiver);
        return receiver[fieldName] ?? null;
      }
      if (this.opts.strict) this.errorf(`map has no entry for key ${quoteGo(fieldName)}`);
      return INVALID;
    }
    this.errorf(`can't evaluate field ${fieldName} in type ${typName}`);
  }

  private evalFunction(
    dot: Val,
    node: IdentifierNode,
    cmd: Node,
    args: readonly Node[] | null,
    final: Val | typeof MISSING,
  ): Val {
    this.node = node;
    const name = node.ident;
    const def = this.opts.funcs.get(name);
    if (def !== undefined) return this.evalCall(dot, def, false, cmd, name, args, final);
    const b = builtins.get(name);
    if (b === undefined) this.errorf(`${quoteGo(name)} is not a defined function`);
    return this.evalCall(dot, b, true, cmd, name, args, final);
  }

  private evalCall(
    dot: Val,
    fn: FuncDef | Builtin,
    isBuiltin: boolean,
    node: Node,
    name: string,
    args: readonly Node[] | null,
    final: Val | typeof MISSING,
  ): Val {
    const argNodes = args === null ? [] : args.slice(1);
    const params = fn.params;
    const variadic = fn.variadic;
    const numIn = argNodes.length + (final !== MISSING ? 1 : 0);
    let numFixed = argNodes.length;
    if (variadic !== undefined) {
      numFixed = params.length;
      if (numIn < numFixed) {
        this.errorf(`wrong number of args for ${name}: want at least ${params.length} got ${argNodes.length}`);
      }
    } else if (numIn !== params.length) {
      this.errorf(`wrong number of args for ${name}: want ${params.length} got ${numIn}`);
    }
    if (isBuiltin && (name === 'and' || name === 'or')) {
      let v: Val = INVALID;
      for (const arg of argNodes) {
        v = this.evalArg(dot, RV, arg);
        if (truth(v) === (name === 'or')) return v;
      }
      if (final !== MISSING) v = final;
      return v;
    }
    const argv: Val[] = new Array<Val>(numIn);
    let i = 0;
    for (; i < numFixed && i < argNodes.length; i++) {
      argv[i] = this.evalArg(dot, params[i] ?? IFACE, argNodes[i] as Node);
    }
    if (variadic !== undefined) {
      for (; i < argNodes.length; i++) argv[i] = this.evalArg(dot, variadic, argNodes[i] as Node);
    }
    if (final !== MISSING) {
      let t: GoType;
      if (variadic !== undefined) t = numIn - 1 < numFixed ? (params[numIn - 1] ?? IFACE) : variadic;
      else t = params[params.length - 1] ?? IFACE;
      argv[i] = this.validateType(final, t);
    }
    let result: Val | undefined;
    try {
      if ('call' in fn) result = fn.call(argv);
      else
        result = fn.fn(
          argv.map((a) => (a === INVALID ? null : a)),
          this.opts.ctx,
        );
      checkResultValue(result);
    } catch (e) {
      if (e instanceof ExecFailure) throw e;
      this.node = node;
      const message = e instanceof Error ? e.message : String(e);
      if (e instanceof RangeError && /call stack/i.test(message)) throw e;
      if (e instanceof TemplateError) this.errorf(`error calling ${name}: ${message}`);
      if (e instanceof FuncError) this.errorf(`error calling ${name}: ${message}`);
      this.errorf(`error calling ${name}: ${message}`);
    }
    const out = result === undefined ? null : result;
    if (this.watch && out !== INVALID) this.carrySensitivity(this.watch, name, argv, out);
    return out;
  }

  /** A result computed from a sensitive argument is sensitive (see `sensitivity.ts`). */
  private carrySensitivity(watch: SensitivityWatch, name: string, argv: readonly Val[], result: GoValue): void {
    let fromContainer = false;
    let fromValue = false;
    for (const a of argv) {
      if (a === INVALID || a === null) continue;
      if (!watch.isSensitive(a)) continue;
      if (typeof a === 'object') fromContainer = true;
      else fromValue = true;
    }
    if (!fromValue && (!fromContainer || SELECTORS.has(name))) return;
    if (!watch.isSensitive(result)) watch.derived(result);
  }

  private validateType(value: Val, typ: GoType | null): Val {
    if (value === INVALID) {
      if (typ === null) return INVALID;
      if (canBeNil(typ)) return typ === RV ? INVALID : null;
      this.errorf(`invalid value; expected ${typ}`);
    }
    if (typ === null || typ === RV || isIfaceType(typ)) return value;
    if (value === null) this.errorf(`wrong type for value; expected ${typ}; got interface {}`);
    const vt = goTypeName(value);
    if (vt !== typ) this.errorf(`wrong type for value; expected ${typ}; got ${vt}`);
    return value;
  }

  private evalArg(dot: Val, typ: GoType | null, n: Node): Val {
    this.node = n;
    switch (n.type) {
      case 'dot':
        return this.validateType(dot, typ);
      case 'nil':
        if (typ !== null && canBeNil(typ)) return typ === RV ? INVALID : null;
        this.errorf(`cannot assign nil to ${typ ?? '<nil>'}`);
      // falls through (errorf never returns)
      case 'field':
        return this.validateType(this.evalFieldNode(dot, n, [n], MISSING), typ);
      case 'variable':
        return this.validateType(this.evalVariableNode(dot, n, null, MISSING), typ);
      case 'pipe':
        return this.validateType(this.evalPipeline(dot, n), typ);
      case 'identifier':
        return this.validateType(this.evalFunction(dot, n, n, null, MISSING), typ);
      case 'chain':
        return this.validateType(this.evalChainNode(dot, n, null, MISSING), typ);
    }
    if (typ === null) this.errorf(`can't handle ${nodeString(n)} for arg of type <nil>`);
    switch (typ) {
      case 'bool':
        if (n.type === 'bool') return n.value;
        this.errorf(`expected bool; found ${nodeString(n)}`);
      // falls through
      case 'float64':
      case 'float32':
        if (n.type === 'number' && n.num.isFloat) return n.num.float64;
        this.errorf(`expected float; found ${nodeString(n)}`);
      // falls through
      case 'int':
      case 'int8':
      case 'int16':
      case 'int32':
      case 'int64':
        if (n.type === 'number' && n.num.isInt) return n.num.int64;
        this.errorf(`expected integer; found ${nodeString(n)}`);
      // falls through
      case 'uint':
      case 'uint8':
      case 'uint16':
      case 'uint32':
      case 'uint64':
      case 'uintptr':
        if (n.type === 'number' && n.num.isUint) return n.num.uint64;
        this.errorf(`expected unsigned integer; found ${nodeString(n)}`);
      // falls through
      case 'string':
        if (n.type === 'string') return n.text;
        this.errorf(`expected string; found ${nodeString(n)}`);
      // falls through
      case 'complex64':
      case 'complex128':
        this.errorf(`expected complex; found ${nodeString(n)}`);
    }
    if (isIfaceType(typ) || typ === RV) return this.evalEmptyInterface(dot, n);
    this.errorf(`can't handle ${nodeString(n)} for arg of type ${typ}`);
  }

  private evalEmptyInterface(dot: Val, n: Node): Val {
    this.node = n;
    switch (n.type) {
      case 'bool':
        return n.value;
      case 'number':
        return this.idealConstant(n);
      case 'string':
        return n.text;
      default:
        this.errorf(`can't handle assignment of ${nodeString(n)} to empty interface argument`);
    }
  }
}
