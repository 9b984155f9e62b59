/**
 * The JSON Schema (draft 2020-12) of the preview document (`kapps preview -o json`, the runs server's preview
 * result), printed by `kapps schema preview`. Written with zod, as the configuration schemas are.
 */
import * as z from 'zod';
import { PHASES } from '../vocabulary.js';
import { PREVIEW_ACTIONS } from './preview.js';

const step = z
  .strictObject({
    name: z.string(),
    unit: z.string().optional(),
    command: z.string(),
    args: z.array(z.string()),
    env: z.record(z.string(), z.string()).describe('Sensitive values are `(sensitive)` or `(sensitive, changed)`.'),
    workingDir: z.string(),
    timeout: z.number().optional().describe('Seconds.'),
    expectedExitCode: z.number().optional(),
    ignoreErrors: z.boolean().optional(),
    loadOutputs: z.boolean().optional(),
    stdout: z.string().optional(),
    stderr: z.string().optional(),
    print: z.string().optional(),
    conditions: z.array(z.string()).optional(),
    mergePriority: z.number().optional(),
  })
  .describe('One step, as `kapps generate` prints it, sensitive values masked.');

const kappSpec = z
  .strictObject({
    id: z.string(),
    dependsOn: z.array(z.string()),
    selected: z.boolean(),
    conditionsOk: z.boolean(),
    phases: z.strictObject(
      Object.fromEntries(PHASES.map((p) => [p, z.array(step)])) as Record<
        (typeof PHASES)[number],
        z.ZodArray<typeof step>
      >,
    ),
  })
  .describe('The redacted spec of a kapp.');

const change = z.strictObject({
  path: z
    .array(z.string())
    .min(1)
    .describe(
      'Segments: ["dependsOn"], [phase] (step order), [phase, step], [phase, step, field], [phase, step, "env", name], ["outputs", id].',
    ),
  from: z.unknown().describe('The value before (masked where sensitive); null when absent.'),
  to: z.unknown().describe('The value after (masked where sensitive); null when absent.'),
});

/** The preview document. */
export const previewDocumentSchema = z
  .strictObject({
    stack: z.string(),
    project: z.string(),
    basedOnRevision: z.number().int().min(1).nullable().describe('The revision compared with; null when none.'),
    kapps: z
      .array(
        z.strictObject({
          id: z.string(),
          action: z.enum(PREVIEW_ACTIONS as [string, ...string[]]),
          from: kappSpec.nullable(),
          to: kappSpec.nullable(),
          changes: z.array(change),
          drift: z.array(change),
          reason: z.string().nullable(),
        }),
      )
      .describe('In stack order, then the kapps to delete by id.'),
    refreshed: z
      .array(z.string())
      .nullable()
      .describe('The kapps whose live outputs were read; null without --refresh.'),
    hasChanges: z.boolean(),
  })
  .describe('kapps preview -o json');

/** The JSON Schema of the preview document. */
export function previewJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(previewDocumentSchema, { io: 'output' });
}
