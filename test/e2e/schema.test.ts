import { describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';

describe('kapps schema', () => {
  it('prints the manifest JSON Schema', async () => {
    const r = await runCli(['schema', 'manifest']);
    expect(r.code).toBe(0);
    const schema = JSON.parse(r.stdout) as { $schema: string; properties: Record<string, unknown> };
    expect(schema.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
    expect(Object.keys(schema.properties)).toContain('kapps');
  });

  it('prints a schema for each kind', async () => {
    for (const kind of ['config', 'stack', 'kapp', 'preview', 'drift', 'server']) {
      const r = await runCli(['schema', kind]);
      expect(r.code).toBe(0);
      expect((JSON.parse(r.stdout) as { $schema: string }).$schema).toContain('2020-12');
    }
  });

  it('rejects an unknown kind with exit 2, listing the kinds', async () => {
    const r = await runCli(['schema', 'manifests']);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(
      'unknown schema kind `manifests`; the kinds are: config, stack, manifest, kapp, preview, drift, server\n',
    );
  });
});
