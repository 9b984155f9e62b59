/** The `kapps generate` YAML, split per kapp into collapsible sections, keys highlighted. */

/** Split the generate document into the part before the kapps and one part per kapp. */
export function splitPerKapp(yaml: string): { head: string; kapps: { id: string; text: string }[] } {
  const lines = yaml.split('\n');
  const kapps: { id: string; lines: string[] }[] = [];
  const head: string[] = [];
  let indent: string | null = null;
  for (const line of lines) {
    const m = /^(\s*)- id: (.*)$/.exec(line);
    if (m && (indent === null || m[1] === indent)) {
      indent = m[1]!;
      kapps.push({ id: m[2]!.replace(/^["']|["']$/g, ''), lines: [line] });
    } else if (kapps.length && (line.startsWith(`${indent} `) || line.trim() === ''))
      kapps[kapps.length - 1]!.lines.push(line);
    else if (kapps.length) kapps[kapps.length - 1]!.lines.push(line);
    else head.push(line);
  }
  return { head: head.join('\n'), kapps: kapps.map((k) => ({ id: k.id, text: k.lines.join('\n').trimEnd() })) };
}

export function YamlText(props: { text: string }) {
  return (
    <pre class="yaml">
      {props.text.split('\n').map((line, i) => {
        const m = /^(\s*(?:- )?)([^\s:#'"][^:#]*?)(:)(\s.*|$)/.exec(line);
        if (line.trimStart().startsWith('#'))
          return (
            <span key={i} class="y-comment">
              {line}
              {'\n'}
            </span>
          );
        if (!m) return `${line}\n`;
        return (
          <span key={i}>
            {m[1]}
            <span class="y-key">{m[2]}</span>
            {m[3]}
            <span class="y-value">{m[4]}</span>
            {'\n'}
          </span>
        );
      })}
    </pre>
  );
}

export function GenerateResult(props: { yaml: string }) {
  const { head, kapps } = splitPerKapp(props.yaml);
  return (
    <section aria-label="Generated spec">
      <h3>Spec ({kapps.length} kapps)</h3>
      {head.trim() && <YamlText text={head} />}
      {kapps.map((k) => (
        <details key={k.id} class="kapp-yaml" data-kapp={k.id}>
          <summary>{k.id}</summary>
          <YamlText text={k.text} />
        </details>
      ))}
    </section>
  );
}
