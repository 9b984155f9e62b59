/**
 * The parse tree of a template (Go's text/template/parse nodes) and `nodeString`, Go's String() of a node, which
 * exec errors quote as `at <NODE>`.
 */
import type { NumberValue } from './literals.js';
import { quoteGo } from './quote.js';

/** Fields every node has: its kind and its start index in the template text. */
interface Base {
  readonly pos: number;
}

/** A sequence of nodes. */
export interface ListNode extends Base {
  readonly type: 'list';
  readonly nodes: Node[];
}
/** Plain text between actions. */
export interface TextNode extends Base {
  readonly type: 'text';
  readonly text: string;
}
/** A non-control action such as `{{ .x | f }}`. */
export interface ActionNode extends Base {
  readonly type: 'action';
  readonly line: number;
  readonly pipe: PipeNode;
}
/** A pipeline with optional variable declarations. */
export interface PipeNode extends Base {
  readonly type: 'pipe';
  readonly line: number;
  isAssign: boolean;
  readonly decl: VariableNode[];
  readonly cmds: CommandNode[];
}
/** One stage of a pipeline: a function or value and its arguments. */
export interface CommandNode extends Base {
  readonly type: 'command';
  readonly args: Node[];
}
/** A function name. */
export interface IdentifierNode extends Base {
  readonly type: 'identifier';
  readonly ident: string;
}
/** `$x` or `$x.a.b`. */
export interface VariableNode extends Base {
  readonly type: 'variable';
  readonly ident: string[];
}
/** `.` */
export interface DotNode extends Base {
  readonly type: 'dot';
}
/** `nil` */
export interface NilNode extends Base {
  readonly type: 'nil';
}
/** `.a.b` */
export interface FieldNode extends Base {
  readonly type: 'field';
  readonly ident: string[];
}
/** `(pipeline).a.b` */
export interface ChainNode extends Base {
  readonly type: 'chain';
  readonly node: Node;
  readonly field: string[];
}
/** `true` / `false` */
export interface BoolNode extends Base {
  readonly type: 'bool';
  readonly value: boolean;
}
/** A number or character constant. */
export interface NumberNode extends Base {
  readonly type: 'number';
  readonly text: string;
  readonly num: NumberValue;
}
/** A string constant: its source text and its value. */
export interface StringNode extends Base {
  readonly type: 'string';
  readonly quoted: string;
  readonly text: string;
}
/** `{{end}}` (never in a finished tree). */
export interface EndNode extends Base {
  readonly type: 'end';
}
/** `{{else}}` (never in a finished tree). */
export interface ElseNode extends Base {
  readonly type: 'else';
  readonly line: number;
}
/** `{{if}}`, `{{range}}` or `{{with}}`. */
export interface BranchNode extends Base {
  readonly type: 'if' | 'range' | 'with';
  readonly line: number;
  readonly pipe: PipeNode;
  readonly list: ListNode;
  readonly elseList: ListNode | null;
}
/** `{{break}}` / `{{continue}}` */
export interface LoopControlNode extends Base {
  readonly type: 'break' | 'continue';
  readonly line: number;
}
/** `{{template "name" pipeline}}` (also what `{{block}}` leaves in place). */
export interface TemplateNode extends Base {
  readonly type: 'template';
  readonly line: number;
  readonly name: string;
  readonly pipe: PipeNode | null;
}

/** Any node of the parse tree. */
export type Node =
  | ListNode
  | TextNode
  | ActionNode
  | PipeNode
  | CommandNode
  | IdentifierNode
  | VariableNode
  | DotNode
  | NilNode
  | FieldNode
  | ChainNode
  | BoolNode
  | NumberNode
  | StringNode
  | EndNode
  | ElseNode
  | BranchNode
  | LoopControlNode
  | TemplateNode;

function pipeString(p: PipeNode): string {
  let s = '';
  if (p.decl.length > 0) s = p.decl.map((v) => v.ident.join('.')).join(', ') + ' := ';
  return s + p.cmds.map(commandString).join(' | ');
}

function commandString(c: CommandNode): string {
  return c.args.map((a) => (a.type === 'pipe' ? `(${pipeString(a)})` : nodeString(a))).join(' ');
}

/** Go's String() of a node (what exec errors show between `<` and `>`). */
export function nodeString(n: Node): string {
  switch (n.type) {
    case 'list':
      return n.nodes.map(nodeString).join('');
    case 'text':
      return n.text;
    case 'action':
      return `{{${pipeString(n.pipe)}}}`;
    case 'pipe':
      return pipeString(n);
    case 'command':
      return commandString(n);
    case 'identifier':
      return n.ident;
    case 'variable':
      return n.ident.join('.');
    case 'dot':
      return '.';
    case 'nil':
      return 'nil';
    case 'field':
      return n.ident.map((id) => '.' + id).join('');
    case 'chain': {
      const head = n.node.type === 'pipe' ? `(${pipeString(n.node)})` : nodeString(n.node);
      return head + n.field.map((f) => '.' + f).join('');
    }
    case 'bool':
      return n.value ? 'true' : 'false';
    case 'number':
      return n.text;
    case 'string':
      return n.quoted;
    case 'end':
      return '{{end}}';
    case 'else':
      return '{{else}}';
    case 'if':
    case 'range':
    case 'with': {
      let s = `{{${n.type} ${pipeString(n.pipe)}}}${nodeString(n.list)}`;
      if (n.elseList) s += `{{else}}${nodeString(n.elseList)}`;
      return s + '{{end}}';
    }
    case 'break':
      return '{{break}}';
    case 'continue':
      return '{{continue}}';
    case 'template':
      return `{{template ${quoteGo(n.name)}${n.pipe ? ' ' + pipeString(n.pipe) : ''}}}`;
  }
}
