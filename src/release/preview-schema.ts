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
    sources: z
      .array(
        z.strictObject({
          id: z.string(),
          kind: z.enum(['git', 'file']),
          uri: z.string().describe('As written; local paths relative to ${kapp_dir}, ${workspace} or ${stack_dir}.'),
          ref: z.string().optional(),
          commit: z.string().nullable().optional().describe('Git: the commit the ref resolved to.'),
          digest: z.string().nullable().optional().describe('Keyed digest of the files the source yields.'),
        }),
      )
      .optional()
      .describe('Absent in releases recorded before spec format 2.'),
    templates: z
      .array(
        z.strictObject({
          id: z.string(),
          source: z.string(),
          dest: z.string(),
          sensitive: z.boolean(),
          digest: z.string().nullable().describe('Keyed digest of the rendered content; null when it reads outputs.'),
          lineCount: z.number().int().min(0),
          lines: z.array(z.string()).optional().describe('Non-sensitive templates within the size bound.'),
        }),
      )
      .optional(),
    vars: z
      .record(z.string(), z.unknown())
      .optional()
      .describe('The resolved `.kapp.vars`; sensitive values are `(sensitive)` or `(sensitive, changed)`.'),
  })
  .describe('The redacted spec of a kapp.');

const change = z.strictObject({
  path: z
    .array(z.string())
    .min(1)
    .describe(
      'Segments: ["dependsOn"], [phase] (step order), [phase, step], [phase, step, field], [phase, step, "env", name], ["sources", id], ["templates", id], ["vars", key, …], ["outputs", id].',
    ),
  from: z.unknown().describe('The value before (masked where sensitive); null when absent.'),
  to: z.unknown().describe('The value after (masked where sensitive); null when absent.'),
  lines: z
    .array(z.string())
    .optional()
    .describe('A non-sensitive template: its changed lines, `- ` removed and `+ ` added.'),
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
          specDigest: z
            .string()
            .nullable()
            .describe('The digest of the spec now; null when the kapp leaves the stack.'),
          notRecorded: z
            .array(z.string())
            .describe('Fields of the spec now that the release compared with did not record (compared without them).'),
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
