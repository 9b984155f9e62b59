/**
 * The template parser: Go text/template/parse's recursive descent over the lexer's items, with the same three-token
 * lookahead (its error lines come from the last item read), the same checks (unknown functions, undefined
 * variables, break/continue outside range, non-executable pipeline stages) and the same messages.
 */
import type { LexItem } from './lexer.js';
import { Item, lex } from './lexer.js';
import { LiteralError, parseNumber, unquoteString } from './literals.js';
import type {
  BranchNode,
  CommandNode,
  ElseNode,
  EndNode,
  ListNode,
  Node,
  PipeNode,
  TemplateNode,
  VariableNode,
} from './nodes.js';
import { nodeString } from './nodes.js';
import { quoteGo } from './quote.js';

/** A parse failure: Go's message (without the `template: NAME:LINE:` prefix) and where it happened. */
export class ParseFailure extends Error {
  constructor(
    message: string,
    /** 1-based line Go reports. */
    readonly line: number,
    /** Index in the template text of the item the parser was looking at. */
    readonly pos: number,
  ) {
    super(message);
  }
}

/** The parsed templates of one text: the main one and every `define` / `block`, by name. */
export type TreeSet = Map<string, ListNode>;

const ZERO_ITEM: LexItem = { typ: Item.Error, pos: 0, val: '', line: 0 };

/** Shared item cursor: `define` and `block` bodies are parsed by their own Tree from the same items. */
class ItemSource {
  private i = 0;
  constructor(private readonly items: readonly LexItem[]) {}
  nextItem(): LexItem {
    const it = this.items[this.i];
    if (it === undefined) return ZERO_ITEM;
    this.i++;
    return it;
  }
}

/** Go's item.String(), as parse errors quote items. */
function itemString(it: LexItem): string {
  if (it.typ === Item.EOF) return 'EOF';
  if (it.typ === Item.Error) return it.val;
  if (it.typ > Item.Keyword) return `<${it.val}>`;
  const chars = [...it.val];
  if (chars.length > 10) return `${quoteGo(chars.slice(0, 10).join(''))}...`;
  return quoteGo(it.val);
}

function isGoSpace(cp: number): boolean {
  return (
    (cp >= 0x09 && cp <= 0x0d) ||
    cp === 0x20 ||
    cp === 0x85 ||
    cp === 0xa0 ||
    cp === 0x1680 ||
    (cp >= 0x2000 && cp <= 0x200a) ||
    cp === 0x2028 ||
    cp === 0x2029 ||
    cp === 0x202f ||
    cp === 0x205f ||
    cp === 0x3000
  );
}

/** Go's parse.IsEmptyTree: only whitespace text (and comments). */
export function isEmptyTree(n: Node | null): boolean {
  if (n === null) return true;
  if (n.type === 'list') return n.nodes.every(isEmptyTree);
  if (n.type === 'text') {
    for (const ch of n.text) if (!isGoSpace(ch.codePointAt(0) ?? 0)) return false;
    return true;
  }
  return false;
}

class Tree {
  name: string;
  private readonly token: LexItem[] = [ZERO_ITEM, ZERO_ITEM, ZERO_ITEM];
  private peekCount = 0;
  private vars: string[] = ['$'];
  private actionLine = 0;
  private rangeDepth = 0;
  root: ListNode | null = null;

  constructor(
    name: string,
    private readonly lexer: ItemSource,
    private readonly treeSet: TreeSet,
    private readonly hasFunction: (name: string) => boolean,
  ) {
    this.name = name;
  }

  // --- token stream -------------------------------------------------------

  private next(): LexItem {
    if (this.peekCount > 0) this.peekCount--;
    else this.token[0] = this.lexer.nextItem();
    return this.token[this.peekCount] ?? ZERO_ITEM;
  }

  private backup(): void {
    this.peekCount++;
  }

  private backup2(t1: LexItem): void {
    this.token[1] = t1;
    this.peekCount = 2;
  }

  private backup3(t2: LexItem, t1: LexItem): void {
    this.token[1] = t1;
    this.token[2] = t2;
    this.peekCount = 3;
  }

  private peek(): LexItem {
    if (this.peekCount > 0) return this.token[this.peekCount - 1] ?? ZERO_ITEM;
    this.peekCount = 1;
    this.token[0] = this.lexer.nextItem();
    return this.token[0];
  }

  private nextNonSpace(): LexItem {
    let token: LexItem;
    do token = this.next();
    while (token.typ === Item.Space);
    return token;
  }

  private peekNonSpace(): LexItem {
    const token = this.nextNonSpace();
    this.backup();
    return token;
  }

  // --- errors ---------------------------------------------------------------

  errorf(message: string): never {
    const t0 = this.token[0] ?? ZERO_ITEM;
    throw new ParseFailure(message, t0.line, t0.pos);
  }

  private expect(expected: Item, context: string): LexItem {
    const token = this.nextNonSpace();
    if (token.typ !== expected) this.unexpected(token, context);
    return token;
  }

  private unexpected(token: LexItem, context: string): never {
    if (token.typ === Item.Error) {
      let extra = '';
      if (this.actionLine !== 0 && this.actionLine !== token.line) {
        extra = ` in action started at ${parseName}:${this.actionLine}`;
        if (token.val.endsWith(' action')) extra = extra.slice(' in action'.length);
      }
      this.errorf(`${itemString(token)}${extra}`);
    }
    this.errorf(`unexpected ${itemString(token)} in ${context}`);
  }

  // --- structure ------------------------------------------------------------

  add(): void {
    const existing = this.treeSet.get(this.name);
    if (existing === undefined || isEmptyTree(existing)) {
      this.treeSet.set(this.name, this.root ?? { type: 'list', pos: 0, nodes: [] });
      return;
    }
    if (!isEmptyTree(this.root)) this.errorf(`template: multiple definition of template ${quoteGo(this.name)}`);
  }

  parse(): void {
    const root: ListNode = { type: 'list', pos: this.peek().pos, nodes: [] };
    this.root = root;
    while (this.peek().typ !== Item.EOF) {
      if (this.peek().typ === Item.LeftDelim) {
        const delim = this.next();
        if (this.nextNonSpace().typ === Item.Define) {
          const newT = new Tree('definition', this.lexer, this.treeSet, this.hasFunction);
          newT.parseDefinition();
          continue;
        }
        this.backup2(delim);
      }
      const n = this.textOrAction();
      if (n.type === 'end' || n.type === 'else') this.errorf(`unexpected ${nodeString(n)}`);
      root.nodes.push(n);
    }
  }

  private parseDefinition(): void {
    const context = 'define clause';
    const token = this.nextNonSpace();
    if (token.typ !== Item.String && token.typ !== Item.RawString) this.unexpected(token, context);
    this.name = this.unquote(token.val);
    this.expect(Item.RightDelim, context);
    const [list, end] = this.itemList();
    this.root = list;
    if (end.type !== 'end') this.errorf(`unexpected ${nodeString(end)} in ${context}`);
    this.add();
  }

  private unquote(s: string): string {
    try {
      return unquoteString(s);
    } catch (e) {
      if (e instanceof LiteralError) this.errorf(e.message);
      throw e;
    }
  }

  private itemList(): [ListNode, EndNode | ElseNode] {
    const list: ListNode = { type: 'list', pos: this.peekNonSpace().pos, nodes: [] };
    while (this.peekNonSpace().typ !== Item.EOF) {
      const n = this.textOrAction();
      if (n.type === 'end' || n.type === 'else') return [list, n];
      list.nodes.push(n);
    }
    this.errorf('unexpected EOF');
  }

  private textOrAction(): Node {
    const token = this.nextNonSpace();
    switch (token.typ) {
      case Item.Text:
        return { type: 'text', pos: token.pos, text: token.val };
      case Item.LeftDelim:
        this.actionLine = token.line;
        try {
          return this.action();
        } finally {
          this.actionLine = 0;
        }
      default:
        this.unexpected(token, 'input');
    }
  }

  private action(): Node {
    const token = this.nextNonSpace();
    switch (token.typ) {
      case Item.Block:
        return this.blockControl();
      case Item.Break:
        return this.loopControl('break', token);
      case Item.Continue:
        return this.loopControl('continue', token);
      case Item.Else:
        return this.elseControl();
      case Item.End:
        return this.endControl();
      case Item.If:
        return this.branchControl('if', true);
      case Item.Range:
        return this.branchControl('range', false);
      case Item.Template:
        return this.templateControl();
      case Item.With:
        return this.branchControl('with', false);
    }
    this.backup();
    const t = this.peek();
    return { type: 'action', pos: t.pos, line: t.line, pipe: this.pipeline('command', Item.RightDelim) };
  }

  private loopControl(kind: 'break' | 'continue', at: LexItem): Node {
    const token = this.nextNonSpace();
    if (token.typ !== Item.RightDelim) this.unexpected(token, `{{${kind}}}`);
    if (this.rangeDepth === 0) this.errorf(`{{${kind}}} outside {{range}}`);
    return { type: kind, pos: at.pos, line: at.line };
  }

  private pipeline(context: string, end: Item): PipeNode {
    const token = this.peekNonSpace();
    const pipe: PipeNode = { type: 'pipe', pos: token.pos, line: token.line, isAssign: false, decl: [], cmds: [] };
    // Variable declarations: `$x :=`, `$x =`, `$i, $v :=` (range only).
    for (;;) {
      const v = this.peekNonSpace();
      if (v.typ !== Item.Variable) break;
      this.next();
      const tokenAfterVariable = this.peek();
      const next = this.peekNonSpace();
      if (next.typ === Item.Assign || next.typ === Item.Declare) {
        pipe.isAssign = next.typ === Item.Assign;
        this.nextNonSpace();
        pipe.decl.push(newVariable(v.pos, v.val));
        this.vars.push(v.val);
      } else if (next.typ === Item.Char && next.val === ',') {
        this.nextNonSpace();
        pipe.decl.push(newVariable(v.pos, v.val));
        this.vars.push(v.val);
        if (context === 'range' && pipe.decl.length < 2) {
          const p = this.peekNonSpace().typ;
          if (p === Item.Variable || p === Item.RightDelim || p === Item.RightParen) continue;
          this.errorf('range can only initialize variables');
        }
        this.errorf(`too many declarations in ${context}`);
      } else if (tokenAfterVariable.typ === Item.Space) {
        this.backup3(v, tokenAfterVariable);
      } else {
        this.backup2(v);
      }
      break;
    }
    for (;;) {
      const token = this.nextNonSpace();
      switch (token.typ) {
        case end:
          this.checkPipeline(pipe, context);
          return pipe;
        case Item.Bool:
        case Item.CharConstant:
        case Item.Complex:
        case Item.Dot:
        case Item.Field:
        case Item.Identifier:
        case Item.Number:
        case Item.Nil:
        case Item.RawString:
        case Item.String:
        case Item.Variable:
        case Item.LeftParen:
          this.backup();
          pipe.cmds.push(this.command());
          break;
        default:
          this.unexpected(token, context);
      }
    }
  }

  private checkPipeline(pipe: PipeNode, context: string): void {
    if (pipe.cmds.length === 0) this.errorf(`missing value for ${context}`);
    pipe.cmds.slice(1).forEach((c, i) => {
      const t = c.args[0]?.type;
      if (t === 'bool' || t === 'dot' || t === 'nil' || t === 'number' || t === 'string') {
        this.errorf(`non executable command in pipeline stage ${i + 2}`);
      }
    });
  }

  private parseControl(
    allowElseIf: boolean,
    context: string,
  ): { pos: number; line: number; pipe: PipeNode; list: ListNode; elseList: ListNode | null } {
    const mark = this.vars.length;
    try {
      const pipe = this.pipeline(context, Item.RightDelim);
      if (context === 'range') this.rangeDepth++;
      const [list, firstEnd] = this.itemList();
      let next = firstEnd;
      if (context === 'range') this.rangeDepth--;
      let elseList: ListNode | null = null;
      if (next.type === 'else') {
        if (allowElseIf && this.peek().typ === Item.If) {
          this.next();
          elseList = { type: 'list', pos: next.pos, nodes: [this.branchControl('if', true)] };
        } else {
          [elseList, next] = this.itemList();
          if (next.type !== 'end') this.errorf(`expected end; found ${nodeString(next)}`);
        }
      }
      return { pos: pipe.pos, line: pipe.line, pipe, list, elseList };
    } finally {
      this.vars.length = mark;
    }
  }

  private branchControl(kind: 'if' | 'range' | 'with', allowElseIf: boolean): BranchNode {
    const c = this.parseControl(allowElseIf, kind);
    return { type: kind, pos: c.pos, line: c.line, pipe: c.pipe, list: c.list, elseList: c.elseList };
  }

  private endControl(): EndNode {
    return { type: 'end', pos: this.expect(Item.RightDelim, 'end').pos };
  }

  private elseControl(): ElseNode {
    const peek = this.peekNonSpace();
    if (peek.typ === Item.If) return { type: 'else', pos: peek.pos, line: peek.line };
    const token = this.expect(Item.RightDelim, 'else');
    return { type: 'else', pos: token.pos, line: token.line };
  }

  private blockControl(): TemplateNode {
    const context = 'block clause';
    const token = this.nextNonSpace();
    const name = this.parseTemplateName(token, context);
    const pipe = this.pipeline(context, Item.RightDelim);
    const block = new Tree(name, this.lexer, this.treeSet, this.hasFunction);
    const [list, end] = block.itemList();
    block.root = list;
    if (end.type !== 'end') this.errorf(`unexpected ${nodeString(end)} in ${context}`);
    block.add();
    return { type: 'template', pos: token.pos, line: token.line, name, pipe };
  }

  private templateControl(): TemplateNode {
    const context = 'template clause';
    const token = this.nextNonSpace();
    const name = this.parseTemplateName(token, context);
    let pipe: PipeNode | null = null;
    if (this.nextNonSpace().typ !== Item.RightDelim) {
      this.backup();
      pipe = this.pipeline(context, Item.RightDelim);
    }
    return { type: 'template', pos: token.pos, line: token.line, name, pipe };
  }

  private parseTemplateName(token: LexItem, context: string): string {
    if (token.typ === Item.String || token.typ === Item.RawString) return this.unquote(token.val);
    this.unexpected(token, context);
  }

  private command(): CommandNode {
    const cmd: CommandNode = { type: 'command', pos: this.peekNonSpace().pos, args: [] };
    for (;;) {
      this.peekNonSpace();
      const operand = this.operand();
      if (operand !== null) cmd.args.push(operand);
      const token = this.next();
      if (token.typ === Item.Space) continue;
      if (token.typ === Item.RightDelim || token.typ === Item.RightParen) this.backup();
      else if (token.typ !== Item.Pipe) this.unexpected(token, 'operand');
      break;
    }
    if (cmd.args.length === 0) this.errorf('empty command');
    return cmd;
  }

  private operand(): Node | null {
    let node = this.term();
    if (node === null) return null;
    if (this.peek().typ === Item.Field) {
      const pos = this.peek().pos;
      const fields: string[] = [];
      while (this.peek().typ === Item.Field) fields.push(this.next().val.slice(1));
      switch (node.type) {
        case 'field':
          node = { type: 'field', pos, ident: [...node.ident, ...fields] };
          break;
        case 'variable':
          node = newVariable(pos, [...node.ident, ...fields].join('.'));
          break;
        case 'bool':
        case 'string':
        case 'number':
        case 'nil':
        case 'dot':
          this.errorf(`unexpected . after term ${quoteGo(nodeString(node))}`);
          break;
        default:
          node = { type: 'chain', pos, node, field: fields };
      }
    }
    return node;
  }

  private term(): Node | null {
    const token = this.nextNonSpace();
    switch (token.typ) {
      case Item.Identifier:
        if (!this.hasFunction(token.val)) this.errorf(`function ${quoteGo(token.val)} not defined`);
        return { type: 'identifier', pos: token.pos, ident: token.val };
      case Item.Dot:
        return { type: 'dot', pos: token.pos };
      case Item.Nil:
        return { type: 'nil', pos: token.pos };
      case Item.Variable:
        return this.useVar(token.pos, token.val);
      case Item.Field:
        return { type: 'field', pos: token.pos, ident: token.val.slice(1).split('.') };
      case Item.Bool:
        return { type: 'bool', pos: token.pos, value: token.val === 'true' };
      case Item.CharConstant:
      case Item.Complex:
      case Item.Number:
        try {
          const num = parseNumber(token.val, token.typ === Item.CharConstant, token.typ === Item.Complex);
          return { type: 'number', pos: token.pos, text: token.val, num };
        } catch (e) {
          if (e instanceof LiteralError) this.errorf(e.message);
          throw e;
        }
      case Item.LeftParen:
        return this.pipeline('parenthesized pipeline', Item.RightParen);
      case Item.String:
      case Item.RawString:
        return { type: 'string', pos: token.pos, quoted: token.val, text: this.unquote(token.val) };
    }
    this.backup();
    return null;
  }

  private useVar(pos: number, name: string): VariableNode {
    const v = newVariable(pos, name);
    const head = v.ident[0] ?? '';
    if (this.vars.includes(head)) return v;
    this.errorf(`undefined variable ${quoteGo(head)}`);
  }
}

function newVariable(pos: number, ident: string): VariableNode {
  return { type: 'variable', pos, ident: ident.split('.') };
}

/** The template name used in parse error texts (set per parse). */
let parseName = '';

/**
 * Parse a template text into its tree set. `hasFunction` tells which identifiers are functions (the FuncMap plus the
 * builtins). Throws ParseFailure.
 */
export function parseTrees(text: string, name: string, hasFunction: (name: string) => boolean): TreeSet {
  parseName = name;
  const items = lex(text, !hasFunction('break'), !hasFunction('continue'));
  const treeSet: TreeSet = new Map();
  const t = new Tree(name, new ItemSource(items), treeSet, hasFunction);
  t.parse();
  t.add();
  return treeSet;
}
