/**
 * Every command of the CLI. Each module only declares options; its handler imports the heavy modules it needs,
 * so `kapps --help` stays fast. Keep one line per command, in the order of `kapps --help`.
 */
import type { CommandModule } from 'yargs';

// eslint-disable-next-line @typescript-eslint/no-empty-object-type, @typescript-eslint/no-explicit-any
export const commands: CommandModule<{}, any>[] = [];
