/**
 * JSON Schemas (draft 2020-12) of kapps' configuration files, for editors (`kapps schema <kind>`).
 */
import * as z from 'zod';
import { kappDescriptor, manifestFile, projectConfigFile, stackFile } from './schema.js';

/** The configuration files that have a schema. */
export const SCHEMA_KINDS = ['config', 'stack', 'manifest', 'kapp'] as const;
export type SchemaKind = (typeof SCHEMA_KINDS)[number];

const SCHEMAS: Record<SchemaKind, z.ZodType> = {
  config: projectConfigFile,
  stack: stackFile,
  manifest: manifestFile,
  kapp: kappDescriptor,
};

/** The JSON Schema of one kind of file, describing what may be written in it. */
export function jsonSchemaFor(kind: SchemaKind): Record<string, unknown> {
  return z.toJSONSchema(SCHEMAS[kind], { io: 'input' });
}
