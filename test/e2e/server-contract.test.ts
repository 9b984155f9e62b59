/**
 * The public contract as `/api/v1/openapi.json` publishes it: the release routes have response schemas (generated
 * from src/api/releases.ts), the list saying when it is paged.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { cleanupProjects, fixtureProject } from '../support/project.js';
import { api, startServer, stopAllServers } from '../support/server.js';

afterEach(async () => {
  await stopAllServers();
  cleanupProjects();
});

interface Schema {
  type?: string;
  description?: string;
  properties?: Record<string, Schema>;
  items?: Schema;
  anyOf?: Schema[];
}
interface OpenApi {
  paths: Record<
    string,
    Record<string, { responses: Record<string, { content?: Record<string, { schema: Schema }> }> }>
  >;
}

describe('the OpenAPI document', () => {
  it('describes the answers of the release routes: the list (bare or paged with nextCursor), one release, unlock', async () => {
    const p = fixtureProject({ stacks: { dev: { provider: 'local', manifests: [] } } });
    const server = await startServer({ args: ['--project', `shop=${p.stackFile}`] });
    const doc = (await api(server.url).get('/api/v1/openapi.json')).body as unknown as OpenApi;
    const ok = (path: string, method: string): Schema | undefined =>
      doc.paths[path]?.[method]?.responses['200']?.content?.['application/json']?.schema;

    const list = ok('/api/v1/projects/{p}/stacks/{s}/releases', 'get');
    const [paged, bare] = list?.anyOf ?? [];
    expect(Object.keys(paged?.properties ?? {})).toEqual(['releases', 'nextCursor']);
    expect(paged?.description).toContain('nextCursor');
    expect(bare?.type).toBe('array');
    expect(bare?.description).toContain('not paged');
    expect(Object.keys(bare?.items?.properties ?? {})).toContain('revision');

    const show = ok('/api/v1/projects/{p}/stacks/{s}/releases/{rev}', 'get');
    expect(Object.keys(show?.properties ?? {})).toEqual(expect.arrayContaining(['revision', 'phase', 'state', 'spec']));

    const unlock = ok('/api/v1/projects/{p}/stacks/{s}/unlock', 'post');
    expect(Object.keys(unlock?.properties ?? {})).toEqual(['unlocked', 'revision', 'previousPhase', 'holder', 'by']);
  });
});
