/** Sugarkube's acquirer and git URI tests, restated for `parseSourceUri` / `sourceFqId`. */
import { describe, expect, it } from 'vitest';
import { SourceUriError, defaultSourceId, parseSourceUri, sourceFqId } from '../../../src/config/source-uri.js';

describe('parseSourceUri', () => {
  it('rejects an empty URI', () => {
    expect(() => parseSourceUri('')).toThrow(new SourceUriError('a source needs a `uri`'));
  });

  it('parses a file URI', () => {
    const p = parseSourceUri('file:///tmp/test.txt');
    expect(p).toEqual({ kind: 'file', path: '/tmp/test.txt' });
    expect(defaultSourceId(p)).toBe('test.txt');
    expect(sourceFqId(p, 'test.txt')).toBe('test.txt');
  });

  it('parses an ssh git URI with a ref', () => {
    const p = parseSourceUri('git@github.com:sugarkube/kapps.git//incubator/tiller#master');
    expect(p).toEqual({
      kind: 'git',
      repo: 'git@github.com:sugarkube/kapps.git',
      path: 'incubator/tiller',
      ref: 'master',
    });
    expect(defaultSourceId(p)).toBe('tiller');
  });

  it('parses the https equivalent the same way', () => {
    const p = parseSourceUri('https://github.com/sugarkube/kapps.git//incubator/tiller#master');
    expect(p).toEqual({
      kind: 'git',
      repo: 'https://github.com/sugarkube/kapps.git',
      path: 'incubator/tiller',
      ref: 'master',
    });
    expect(sourceFqId(p, defaultSourceId(p))).toBe('github.com-sugarkube-kapps-tiller');
  });

  it('keeps a trailing slash of the path and trims the ref', () => {
    const p = parseSourceUri('git@github.com:sugarkube/kapps.git//incubator/tiller/# v1 ');
    expect(p).toMatchObject({ path: 'incubator/tiller/', ref: 'v1' });
    expect(defaultSourceId(p)).toBe('tiller');
  });

  it('has an empty ref when the URI has none', () => {
    expect(parseSourceUri('git@github.com:sugarkube/kapps.git//incubator/tiller')).toMatchObject({ ref: '' });
  });

  it('splits at the last `//` and moves a slash ending the repository to the path', () => {
    expect(parseSourceUri('git@github.com:helm/charts.git///stable/wordpress')).toMatchObject({
      repo: 'git@github.com:helm/charts.git',
      path: '/stable/wordpress',
    });
  });

  it('rejects a git URI without `//` instead of crashing', () => {
    for (const uri of ['git@github.com:sugarkube/kapps.git', 'https://github.com/org/repo.git']) {
      let err: unknown;
      try {
        parseSourceUri(uri);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(SourceUriError);
      expect((err as SourceUriError).message).toBe(
        `git source URI \`${uri}\` has no \`//\` between the repository and the path inside it`,
      );
      expect((err as SourceUriError).hint).toBe(
        'write `<repository>//<path>#<ref>`, e.g. `git@github.com:org/kapps.git//incubator/tiller#master`',
      );
    }
  });

  it('rejects a URI that is neither git nor file', () => {
    expect(() => parseSourceUri('ftp://example.com/chart')).toThrow(
      "can't tell how to fetch source URI `ftp://example.com/chart`",
    );
  });
});

describe('sourceFqId', () => {
  const fq = (uri: string, id?: string) => {
    const p = parseSourceUri(uri);
    return sourceFqId(p, id ?? defaultSourceId(p));
  };

  it('names helm-charts-wordpress with or without slashes around the path', () => {
    expect(fq('git@github.com:helm/charts.git//stable/wordpress')).toBe('helm-charts-wordpress');
    expect(fq('git@github.com:helm/charts.git///stable/wordpress/')).toBe('helm-charts-wordpress');
  });

  it('omits the id for a path of `/`', () => {
    expect(fq('git@github.com:helm/charts.git///')).toBe('helm-charts');
  });

  it('uses an explicit id', () => {
    expect(fq('git@github.com:sugarkube/sugarkube.git//sample/site1#master', 'site1-values')).toBe(
      'sugarkube-sugarkube-site1-values',
    );
    expect(fq('git@github.com:sugarkube/kapps.git//incubator/tiller', 'banana')).toBe('sugarkube-kapps-banana');
  });

  it('replaces slashes in ids', () => {
    expect(fq('git@github.com:sugarkube/kapps.git//x', 'a/b')).toBe('sugarkube-kapps-a-b');
  });
});
