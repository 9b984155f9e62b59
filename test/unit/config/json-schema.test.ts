/** JSON Schemas of the configuration files. */
import { describe, expect, it } from 'vitest';
import { SCHEMA_KINDS, jsonSchemaFor } from '../../../src/config/json-schema.js';

interface Schema {
  $schema?: string;
  title?: string;
  type?: string;
  properties?: Record<string, Schema & { $ref?: string; description?: string }>;
  additionalProperties?: boolean | Schema;
  required?: string[];
  $defs?: Record<string, Schema>;
}

describe('jsonSchemaFor', () => {
  it('produces draft 2020-12 schemas for every kind', () => {
    for (const kind of SCHEMA_KINDS) {
      const s = jsonSchemaFor(kind) as Schema;
      expect(s.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
      expect(s.title).toMatch(/kapps|sugarkube/);
    }
  });

  it('describes a manifest: strict objects, documented fields, kapps need an id', () => {
    const s = jsonSchemaFor('manifest') as Schema;
    expect(s.additionalProperties).toBe(false);
    expect(Object.keys(s.properties ?? {})).toEqual(['defaults', 'options', 'kapps', 'filepath']);
    const kapp = s.$defs?.ManifestKapp;
    expect(kapp?.required).toEqual(['id']);
    expect(kapp?.properties?.id?.description).toBe('Kapp id: unique in the manifest; no `.`, `:` or `*`.');
    const step = s.$defs?.RunStep;
    expect(Object.keys(step?.properties ?? {})).toContain('merge_priority');
    expect(step?.properties?.merge_priority).toMatchObject({ type: 'integer', minimum: 0, maximum: 255 });
  });

  it('describes sugarkube-conf.yaml with kapps settings', () => {
    const s = jsonSchemaFor('config') as Schema;
    expect(Object.keys(s.properties ?? {})).toEqual([
      'num_workers',
      'programs',
      'run_units',
      'log_level',
      'json_logs',
      'no_color',
      'verbose',
      'project',
      'backend',
      'source_substitutions',
    ]);
  });

  it('describes a stack file as a map of stacks', () => {
    const s = jsonSchemaFor('stack') as Schema;
    expect(s.type).toBe('object');
    expect(s.additionalProperties).toEqual({ $ref: '#/$defs/Stack' });
  });
});
