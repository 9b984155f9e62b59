/**
 * `kapps schema <kind>`: print the JSON Schema (draft 2020-12) of a configuration file, for editors that complete
 * and check YAML against a schema.
 */
import type { CommandModule } from 'yargs';
import { UsageError } from '../../diagnostics/errors.js';

interface SchemaArgs {
  kind: string;
}

const KINDS = ['config', 'stack', 'manifest', 'kapp', 'preview', 'drift', 'server'] as const;

export const schemaCommand: CommandModule<object, SchemaArgs> = {
  command: 'schema <kind>',
  describe:
    'Print the JSON Schema of a configuration file (config, stack, manifest, kapp, server) or of a document (preview, drift)',
  builder: (y) =>
    y.positional('kind', {
      type: 'string',
      describe:
        'config (sugarkube-conf.yaml), stack, manifest, kapp (sugarkube.yaml), server (kapps serve --config), preview (`preview -o json`) or drift (`drift -o json`)',
      demandOption: true,
    }),
  handler: async (argv) => {
    const kind = KINDS.find((k) => k === argv.kind);
    if (!kind) {
      throw new UsageError(`unknown schema kind \`${argv.kind}\`; the kinds are: ${KINDS.join(', ')}`);
    }
    if (kind === 'server') {
      const { serverConfigJsonSchema } = await import('../../server/config.js');
      process.stdout.write(`${JSON.stringify(serverConfigJsonSchema(), null, 2)}\n`);
      return;
    }
    if (kind === 'preview') {
      const { previewJsonSchema } = await import('../../release/preview-schema.js');
      process.stdout.write(`${JSON.stringify(previewJsonSchema(), null, 2)}\n`);
      return;
    }
    if (kind === 'drift') {
      const { z } = await import('zod');
      const { driftReportSchema } = await import('../../api/drift.js');
      process.stdout.write(`${JSON.stringify(z.toJSONSchema(driftReportSchema, { io: 'output' }), null, 2)}\n`);
      return;
    }
    const { jsonSchemaFor } = await import('../../config/json-schema.js');
    process.stdout.write(`${JSON.stringify(jsonSchemaFor(kind), null, 2)}\n`);
  },
};
