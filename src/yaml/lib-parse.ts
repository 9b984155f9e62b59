/**
 * The complete YAML front-end, on the `yaml` package: used for everything the fast front-end does not take (see
 * `./yaml-fast-parse.ts`), and for syntax errors, whose messages and positions come from the `yaml` package.
 */
import { LineCounter, isAlias, isMap, isScalar, isSeq, parseAllDocuments } from 'yaml';
import type { Node as YNode, Pair, Scalar } from 'yaml';
import { error as errorDiag, type SourceLocation } from '../diagnostics/diagnostic.js';
import { ConfigError } from '../diagnostics/errors.js';
import { depthError, TreeAssembler, YamlPositions, type YamlNode } from './tree.js';

const PARSE_OPTIONS = {
  schema: 'failsafe',
  merge: false,
  uniqueKeys: false,
  version: '1.1',
  prettyErrors: false,
  strict: false,
} as const;

class LibTreeBuilder {
  readonly asm: TreeAssembler;

  constructor(
    readonly file: string,
    private readonly lines: LineCounter,
  ) {
    this.asm = new TreeAssembler(new YamlPositions(file, '', (offset) => lines.linePos(offset)));
  }

  /** `at`: the offset where a missing node is (an empty value sits there). */
  build(node: YNode | null | undefined, at: number, top: boolean): YamlNode {
    if (node === null || node === undefined) return this.asm.nullScalar(at);
    const range = node.range ?? [0, 0, 0];
    if (isAlias(node)) return this.asm.alias(node.source, range[0], range[1]);
    const anchor = node.anchor;
    if (anchor) this.asm.beginAnchor(anchor);
    let out: YamlNode;
    if (isScalar(node)) out = this.scalar(node, range);
    else if (isMap(node) || isSeq(node)) {
      this.asm.enter(range[0]);
      try {
        out = this.collection(node, top);
      } finally {
        this.asm.leave();
      }
    } else out = this.asm.nullScalar(at);
    if (anchor) this.asm.endAnchor(anchor, out);
    return out;
  }

  collection(node: YNode, top: boolean): YamlNode {
    const range = node.range ?? [0, 0, 0];
    let out: YamlNode;
    if (isMap(node)) {
      const at = range[0];
      const keys: YamlNode[] = [];
      const values: YamlNode[] = [];
      for (const pair of node.items as Pair<YNode | null, YNode | null>[]) {
        const key = this.build(pair.key, at, false);
        // An empty value sits where its key ends.
        const after = key.kind === 'scalar' && key.end >= 0 ? key.end : key.start;
        keys.push(key);
        values.push(this.build(pair.value, after, false));
      }
      out = this.asm.map(keys, values, at, top);
    } else if (isSeq(node)) {
      const at = range[0];
      out = this.asm.seq(
        (node.items as (YNode | null)[]).map((item) => this.build(item, at, false)),
        at,
      );
    } else out = this.asm.nullScalar(range[0]);
    return out;
  }

  scalar(node: Scalar, range: readonly [number, number, number]): YamlNode {
    // With the failsafe schema every scalar's value is its source text.
    const raw = typeof node.source === 'string' ? node.source : typeof node.value === 'string' ? node.value : '';
    const block = node.type === 'BLOCK_LITERAL' || node.type === 'BLOCK_FOLDED';
    return this.asm.scalar(raw, node.type === 'PLAIN', node.tag, range[0], block ? -1 : range[1]);
  }
}

/**
 * Parse the first document of `text` with the `yaml` package. Throws `ConfigError` with every syntax error, or
 * with every semantic problem (unknown anchors, duplicate keys, bad merges, tag mismatches).
 */
export function parseWithYamlLib(text: string, file: string): YamlNode | null {
  const lines = new LineCounter();
  const docs = parseAllDocuments(text, { ...PARSE_OPTIONS, lineCounter: lines });
  // yaml.v2 reads only the first document of a stream.
  const doc = Array.isArray(docs) ? docs[0] : undefined;
  if (!doc) return null;
  if (doc.errors.length > 0) {
    // The package catches its own stack overflow on deeply nested input and reports it as an error at that point.
    const overflow = doc.errors.find((e) => /call stack/i.test(e.message));
    if (overflow) {
      const s = lines.linePos(overflow.pos[0]);
      throw depthError({ file, line: s.line, column: s.col });
    }
    throw new ConfigError(
      doc.errors.map((e) => {
        const s = lines.linePos(e.pos[0]);
        const en = lines.linePos(e.pos[1]);
        const loc: SourceLocation = { file, line: s.line, column: s.col, endLine: en.line, endColumn: en.col };
        return errorDiag(`invalid YAML: ${e.message}`, loc);
      }),
    );
  }
  if (doc.contents === null) return null;
  const builder = new LibTreeBuilder(file, lines);
  const root = builder.build(doc.contents, 0, true);
  // A document with a marker but no content (`---`) is empty, like one without a marker.
  if (root.kind === 'scalar' && root.value === null && root.text === '') return null;
  return builder.asm.finish(root);
}
