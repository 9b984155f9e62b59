/**
 * Every command of the CLI. Each module only declares options; its handler imports the heavy modules it needs,
 * so `kapps --help` stays fast. Keep one line per command, in the order of `kapps --help`.
 */
import type { CommandModule } from 'yargs';
import { driftCommand } from './drift.js';
import { generateCommand } from './generate.js';
import { graphCommand } from './graph.js';
import { previewCommand } from './preview.js';
import { releaseCommand } from './release.js';
import { renderCommand } from './render.js';
import { runsCommand } from './runs.js';
import { schemaCommand } from './schema.js';
import { serveCommand } from './serve.js';
import { cleanCommand, deleteCommand, installCommand, outputCommand, templateCommand } from './run.js';
import { validateCommand } from './validate.js';
import { varsCommand } from './vars.js';
import { workspaceCommand } from './workspace.js';

// eslint-disable-next-line @typescript-eslint/no-empty-object-type, @typescript-eslint/no-explicit-any
export const commands: CommandModule<{}, any>[] = [
  installCommand,
  deleteCommand,
  outputCommand,
  cleanCommand,
  templateCommand,
  generateCommand,
  graphCommand,
  varsCommand,
  validateCommand,
  previewCommand,
  driftCommand,
  releaseCommand,
  runsCommand,
  workspaceCommand,
  renderCommand,
  schemaCommand,
  serveCommand,
];
