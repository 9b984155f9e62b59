/**
 * A run's log for any size: only the rows in view are in the page (rows of one fixed height over a spacer as tall
 * as the whole log), so 50,000 lines scroll like 50. Search with next/previous and a match count, ANSI colours,
 * timestamps relative to the run's start (absolute on hover), a link to each line, a download of the whole log
 * through the logs API. Following the tail stops as soon as the reader scrolls up, and "Jump to latest" resumes it.
 */
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { api, describeError, type LogLine } from './api';
import { parseAnsi, stripAnsi, type AnsiSegment } from './ansi';
import { formatDuration, href } from './format';
import type { StepView } from './run-model';

/** The height of a row in px; `.log .row` in style.css says the same. */
export const ROW_H = 18;
const OVERSCAN = 20;

export interface LogViewProps {
  runId: string;
  /** The run's whole log, appended to in place; `count` says how many lines it has now. */
  lines: LogLine[];
  count: number;
  /** Show only this kapp's lines. */
  kapp?: string;
  /** When the run started (ms): timestamps are relative to it. */
  start: number | null;
  label: string;
  testId: string;
  small?: boolean;
  /** A line (1-based, in the whole log) to bring into view and mark, as a link to it asks. */
  target?: number | null;
  /**
   * With `kapp`: the kapp's steps as they ran. The lines are then grouped per step run (the lines in a row of one
   * phase/step), each group under a header with the step's status and duration that collapses its lines.
   */
  steps?: readonly StepView[];
}

/** A run of lines of one step; the `nth` run of that phase/step in the kapp's log (matched to its nth step). */
interface Group {
  phase: string;
  step: string;
  nth: number;
  count: number;
}

/** The positions (in the whole log) of the lines shown, kept up to date as lines arrive. */
interface ViewIndex {
  kapp: string | undefined;
  collapsed: ReadonlySet<number> | null;
  scanned: number;
  /** A line's position in the whole log, or a group's header as -(group + 1). */
  idx: number[];
  groups: Group[];
  /** The group taking the next line of its step (-1: none). */
  open: number;
}

/** The positions (in the view) of the lines matching the search, kept up to date as lines arrive. */
interface MatchIndex {
  query: string;
  view: ViewIndex | null;
  scanned: number;
  hits: number[];
}

export function LogView(props: LogViewProps) {
  const { lines, count } = props;
  const box = useRef<HTMLDivElement>(null);
  const [follow, setFollow] = useState(props.target == null);
  const [scrollTop, setScrollTop] = useState(0);
  const [viewH, setViewH] = useState(400);
  const [query, setQuery] = useState('');
  const [current, setCurrent] = useState(-1);
  const [downloading, setDownloading] = useState<string | null>(null);
  const [collapsed, setCollapsed] = useState<ReadonlySet<number>>(new Set());
  const programmatic = useRef(-1);
  const view = useRef<ViewIndex>({ kapp: undefined, collapsed: null, scanned: 0, idx: [], groups: [], open: -1 });
  const matches = useRef<MatchIndex>({ query: '', view: null, scanned: 0, hits: [] });

  // The lines in view: every line, or the kapp's lines (scanned once each).
  const grouped = props.kapp !== undefined && props.steps !== undefined;
  const groupsShut = grouped ? collapsed : null;
  if (view.current.kapp !== props.kapp || view.current.collapsed !== groupsShut)
    view.current = { kapp: props.kapp, collapsed: groupsShut, scanned: 0, idx: [], groups: [], open: -1 };
  const v = view.current;
  if (props.kapp !== undefined) {
    for (; v.scanned < count; v.scanned++) {
      const l = lines[v.scanned]!;
      if (l.kapp !== props.kapp) continue;
      if (!grouped || !l.step) {
        v.open = -1;
        v.idx.push(v.scanned);
        continue;
      }
      const open = v.open >= 0 ? v.groups[v.open] : undefined;
      if (!open || open.phase !== (l.phase ?? '') || open.step !== l.step) {
        const nth = v.groups.filter((g) => g.phase === (l.phase ?? '') && g.step === l.step).length;
        v.groups.push({ phase: l.phase ?? '', step: l.step, nth, count: 0 });
        v.open = v.groups.length - 1;
        v.idx.push(-v.groups.length);
      }
      v.groups[v.open]!.count++;
      if (!groupsShut?.has(v.open)) v.idx.push(v.scanned);
    }
  }
  const total = props.kapp === undefined ? count : v.idx.length;
  // The lines (not the group headers), the collapsed ones included.
  const lineCount = grouped
    ? total - v.groups.length + v.groups.reduce((n, g, i) => n + (groupsShut?.has(i) ? g.count : 0), 0)
    : total;
  const at = (pos: number) => (props.kapp === undefined ? pos : v.idx[pos]!);

  // The search's matches, case-insensitive on the text without escapes.
  const needle = query.toLowerCase();
  if (matches.current.query !== needle || matches.current.view !== v)
    matches.current = { query: needle, view: v, scanned: 0, hits: [] };
  const mt = matches.current;
  if (needle) {
    for (; mt.scanned < total; mt.scanned++)
      if (at(mt.scanned) >= 0 && stripAnsi(lines[at(mt.scanned)]!.text).toLowerCase().includes(needle))
        mt.hits.push(mt.scanned);
  }
  const currentPos = current >= 0 && current < mt.hits.length ? mt.hits[current]! : -1;

  const scrollToPos = (pos: number) => {
    const el = box.current;
    if (!el) return;
    const top = Math.max(0, pos * ROW_H - el.clientHeight / 2 + ROW_H / 2);
    el.scrollTop = top;
    // The log itself in the window too.
    const r = el.getBoundingClientRect();
    if (r.top < 0 || r.bottom > innerHeight) el.scrollIntoView({ block: 'nearest' });
    setScrollTop(el.scrollTop);
  };

  // Follow the tail: after each render with new lines, to the bottom.
  useLayoutEffect(() => {
    const el = box.current;
    if (!el) return;
    if (el.clientHeight !== viewH) setViewH(el.clientHeight);
    if (follow) {
      el.scrollTop = el.scrollHeight;
      programmatic.current = el.scrollTop;
    }
    if (el.scrollTop !== scrollTop) setScrollTop(el.scrollTop);
  });

  // A link to a line: bring it into view once it has arrived.
  const shownTarget = useRef<number | null>(null);
  useEffect(() => {
    const t = props.target;
    if (t == null || shownTarget.current === t || t > count) return;
    let pos = t - 1;
    if (props.kapp !== undefined) {
      pos = v.idx.indexOf(t - 1);
      if (pos < 0) return;
    }
    shownTarget.current = t;
    setFollow(false);
    scrollToPos(pos);
  });

  const onScroll = () => {
    const el = box.current;
    if (!el) return;
    const atBottom = el.scrollTop + el.clientHeight >= el.scrollHeight - ROW_H;
    // Scrolled up by the reader (not by following): stop following until "Jump to latest".
    if (follow && !atBottom && el.scrollTop < programmatic.current - 1) setFollow(false);
    setScrollTop(el.scrollTop);
  };
  const stopFollow = () => {
    if (follow) {
      programmatic.current = Number.MAX_SAFE_INTEGER;
      setFollow(false);
    }
  };

  const go = (delta: number) => {
    if (!mt.hits.length) return;
    const n = mt.hits.length;
    const next = current < 0 ? (delta > 0 ? 0 : n - 1) : (current + delta + n) % n;
    setCurrent(next);
    stopFollow();
    scrollToPos(mt.hits[next]!);
  };

  const download = async () => {
    setDownloading('Downloading…');
    try {
      const parts: string[] = [];
      let offset = 0;
      for (;;) {
        const chunk = await api.logs(props.runId, offset);
        for (const l of chunk.lines) if (props.kapp === undefined || l.kapp === props.kapp) parts.push(plainLine(l));
        if (chunk.complete || chunk.nextOffset === offset || chunk.lines.length === 0) break;
        offset = chunk.nextOffset;
      }
      const url = URL.createObjectURL(new Blob([parts.join('')], { type: 'text/plain' }));
      const a = document.createElement('a');
      a.href = url;
      a.download = `${props.runId}${props.kapp ? `-${props.kapp.replace(/[^A-Za-z0-9._-]/g, '_')}` : ''}.log`;
      a.click();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
      setDownloading(null);
    } catch (e) {
      setDownloading(`Download failed: ${describeError(e)}`);
    }
  };

  const first = Math.max(0, Math.floor(scrollTop / ROW_H) - OVERSCAN);
  const last = Math.min(total, Math.ceil((scrollTop + viewH) / ROW_H) + OVERSCAN);
  const rows = [];
  for (let pos = first; pos < last; pos++) {
    const n = at(pos);
    if (n < 0) {
      const g = -n - 1;
      rows.push(
        <GroupRow
          key={`g${g}`}
          group={v.groups[g]!}
          step={
            props.steps?.filter((st) => st.phase === v.groups[g]!.phase && st.name === v.groups[g]!.step)[
              v.groups[g]!.nth
            ]
          }
          shut={collapsed.has(g)}
          onToggle={() => {
            const next = new Set(collapsed);
            if (!next.delete(g)) next.add(g);
            setCollapsed(next);
          }}
        />,
      );
      continue;
    }
    rows.push(
      <LogRow
        key={n}
        n={n + 1}
        line={lines[n]!}
        runId={props.runId}
        start={props.start}
        query={needle}
        current={pos === currentPos}
        target={props.target === n + 1}
      />,
    );
  }

  return (
    <div class="log-view" data-testid={`${props.testId}-view`}>
      <div class="log-tools">
        <label>
          <span class="sr-only">Search the log{props.kapp ? ` of ${props.kapp}` : ''}</span>
          <input
            type="search"
            placeholder="Search the log"
            value={query}
            data-testid={`${props.testId}-search`}
            onInput={(e) => {
              setQuery((e.target as HTMLInputElement).value);
              setCurrent(-1);
            }}
            onKeyDown={(e) => {
              if (e.key === 'Enter') {
                e.preventDefault();
                go(e.shiftKey ? -1 : 1);
              }
            }}
          />
        </label>
        <button type="button" onClick={() => go(-1)} disabled={!mt.hits.length}>
          Previous match
        </button>
        <button type="button" onClick={() => go(1)} disabled={!mt.hits.length}>
          Next match
        </button>
        <span role="status" data-testid={`${props.testId}-matches`}>
          {needle
            ? mt.hits.length
              ? `${current >= 0 ? current + 1 : 0} of ${mt.hits.length} matches`
              : 'no match'
            : ''}
        </span>
        <span class="log-count">{lineCount === 1 ? '1 line' : `${lineCount} lines`}</span>
        <button type="button" onClick={() => void download()}>
          Download
        </button>
        {downloading && <span role="status">{downloading}</span>}
        {!follow && (
          <button type="button" class="jump" onClick={() => setFollow(true)}>
            Jump to latest ↓
          </button>
        )}
      </div>
      <div
        class={`log${props.small ? ' small' : ''}`}
        ref={box}
        tabindex={0}
        role="log"
        aria-label={props.label}
        data-testid={props.testId}
        data-follow={follow ? 'on' : 'off'}
        // A short log takes only the room it needs.
        style={total * ROW_H < 200 ? { height: `${Math.max(1, total) * ROW_H + 20}px` } : undefined}
        onScroll={onScroll}
        onWheel={(e) => {
          if (e.deltaY < 0) stopFollow();
        }}
        onKeyDown={(e) => {
          if (['ArrowUp', 'PageUp', 'Home'].includes(e.key)) stopFollow();
        }}
      >
        <div class="log-space" style={{ height: `${total * ROW_H}px` }}>
          <div class="log-rows" style={{ transform: `translateY(${first * ROW_H}px)` }}>
            {rows}
          </div>
        </div>
        {total === 0 && <div class="row">No log lines.</div>}
      </div>
    </div>
  );
}

/** The header of a step's run of lines: phase/step, status, duration, its line count; a button collapses them. */
function GroupRow(props: { group: Group; step: StepView | undefined; shut: boolean; onToggle: () => void }) {
  const { group, step } = props;
  return (
    <div class={`row group s-${step?.status ?? 'running'}`} data-group={`${group.phase}/${group.step}`}>
      <button type="button" aria-expanded={!props.shut} onClick={props.onToggle}>
        <span aria-hidden="true">{props.shut ? '▸' : '▾'}</span> {group.phase}/{group.step}: {step?.status ?? 'running'}
        {step?.exitCode != null ? `, exit ${step.exitCode}` : ''}
        {step?.durationMs != null ? `, ${formatDuration(step.durationMs)}` : ''} ·{' '}
        {group.count === 1 ? '1 line' : `${group.count} lines`}
      </button>
    </div>
  );
}

function LogRow(props: {
  n: number;
  line: LogLine;
  runId: string;
  start: number | null;
  query: string;
  current: boolean;
  target: boolean;
}) {
  const l = props.line;
  const time = Date.parse(l.time);
  return (
    <div
      class={`row l-${l.stream}${props.current ? ' hit-current' : ''}${props.target ? ' l-target' : ''}`}
      data-line={props.n}
    >
      <a class="ln" href={href.runLine(props.runId, props.n)} tabindex={-1} aria-label={`Line ${props.n}`}>
        {props.n}
      </a>
      <time class="ts" dateTime={l.time} title={Number.isNaN(time) ? l.time : new Date(time).toISOString()}>
        {relative(time, props.start)}
      </time>
      <span class="lt">
        {l.kapp && (
          <span class="l-kapp">
            [{l.kapp}
            {l.step ? ` ${l.phase}/${l.step}` : ''}]{' '}
          </span>
        )}
        <Segments segments={parseAnsi(l.text)} query={props.query} />
      </span>
    </div>
  );
}

/** The styled segments, the search's matches marked across them. */
function Segments(props: { segments: AnsiSegment[]; query: string }) {
  const { segments, query } = props;
  const plain = segments.map((s) => s.text).join('');
  const ranges: [number, number][] = [];
  if (query) {
    const lower = plain.toLowerCase();
    for (let i = lower.indexOf(query); i >= 0; i = lower.indexOf(query, i + query.length))
      ranges.push([i, i + query.length]);
  }
  const out = [];
  let pos = 0;
  let key = 0;
  for (const s of segments) {
    const end = pos + s.text.length;
    const style = s.fg || s.bg ? { ...(s.fg ? { color: s.fg } : {}), ...(s.bg ? { backgroundColor: s.bg } : {}) } : {};
    // Cut the segment where matches start and end.
    const cuts = new Set([pos, end]);
    for (const [a, b] of ranges) {
      if (a > pos && a < end) cuts.add(a);
      if (b > pos && b < end) cuts.add(b);
    }
    const points = [...cuts].sort((a, b) => a - b);
    for (let i = 0; i + 1 < points.length; i++) {
      const [a, b] = [points[i]!, points[i + 1]!];
      const text = s.text.slice(a - pos, b - pos);
      const hit = ranges.some(([x, y]) => a >= x && b <= y);
      const inner = hit ? <mark>{text}</mark> : text;
      out.push(
        s.cls || s.fg || s.bg ? (
          <span key={key++} class={s.cls || undefined} style={style}>
            {inner}
          </span>
        ) : hit ? (
          <mark key={key++}>{text}</mark>
        ) : (
          text
        ),
      );
    }
    pos = end;
  }
  return <>{out}</>;
}

function relative(time: number, start: number | null): string {
  if (Number.isNaN(time)) return '';
  if (start === null) return new Date(time).toISOString().slice(11, 19);
  const ms = Math.max(0, time - start);
  const s = Math.floor(ms / 1000);
  const m = Math.floor(s / 60);
  const h = Math.floor(m / 60);
  const pad = (n: number) => String(n).padStart(2, '0');
  return h ? `${h}:${pad(m % 60)}:${pad(s % 60)}` : `${pad(m)}:${pad(s % 60)}`;
}

/** One line of the downloaded log: time, stream, where it comes from, the text without escapes. */
function plainLine(l: LogLine): string {
  const where = l.kapp ? ` [${l.kapp}${l.step ? ` ${l.phase}/${l.step}` : ''}]` : '';
  return `${l.time} ${l.stream}${where} ${stripAnsi(l.text)}\n`;
}
