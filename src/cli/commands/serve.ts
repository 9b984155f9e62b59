/**
 * `kapps serve`: the runs server (docs/server.md). Prints one line on stdout once it listens
 * (`kapps serve: listening on http://HOST:PORT`); everything else goes to stderr. SIGTERM or SIGINT stops it
 * gracefully (running runs get `--grace` seconds, then are cancelled), exit 0; a second signal cancels at once.
 * `kapps serve hash-token` reads a token on stdin and prints the SHA-256 the configuration file holds.
 */
import type { CommandModule } from 'yargs';
import { numberArg } from '../number-args.js';

interface ServeArgs {
  listen: string;
  backend?: string;
  config?: string;
  project: string[];
  dataDir?: string;
  maxRuns?: number;
  grace?: number;
  lease?: number;
}

const hashTokenCommand: CommandModule<object, object> = {
  command: 'hash-token',
  describe: 'Read a token on stdin; print its SHA-256 (hex), as `tokens[].sha256` in the server configuration holds it',
  handler: async () => {
    const { UsageError } = await import('../../diagnostics/errors.js');
    const { hashToken } = await import('../../server/config.js');
    let text = '';
    process.stdin.setEncoding('utf8');
    for await (const chunk of process.stdin) text += String(chunk);
    const token = text.replace(/\r?\n$/, '');
    if (token === '' || /\s/.test(token)) throw new UsageError('give one token on stdin (no spaces, one line)');
    process.stdout.write(`${hashToken(token)}\n`);
  },
};

export const serveCommand: CommandModule<object, ServeArgs> = {
  command: 'serve',
  describe: 'Run the runs server: an HTTP API that queues and runs generate, preview, apply and destroy runs',
  builder: (y) =>
    y
      .command(hashTokenCommand)
      .option('listen', {
        type: 'string',
        default: '127.0.0.1:7070',
        requiresArg: true,
        describe: 'HOST:PORT to listen on (port 0 picks a free one); other than loopback only with tokens',
      })
      .option('backend', {
        type: 'string',
        requiresArg: true,
        describe:
          'Where releases and runs are kept: a directory or a postgres:// URL (env KAPPS_BACKEND; default $KAPPS_HOME)',
      })
      .option('config', {
        type: 'string',
        requiresArg: true,
        describe: 'The server configuration file (projects, tokens, limits; `kapps schema server`)',
      })
      .option('project', {
        type: 'string',
        array: true,
        default: [] as string[],
        requiresArg: true,
        describe: 'Register a project: NAME=STACK_FILE (repeatable)',
      })
      .option('data-dir', {
        type: 'string',
        requiresArg: true,
        describe: 'Where the workspaces are kept (default <backend dir>/server or $KAPPS_HOME/server)',
      })
      .option('max-runs', {
        requiresArg: true,
        coerce: numberArg('max-runs', { integer: true, min: 1 }),
        describe: 'Runs executed at once (default 2)',
      })
      .option('grace', {
        requiresArg: true,
        coerce: numberArg('grace', { integer: false, min: 0 }),
        describe: 'On SIGTERM, seconds running runs may take to finish before they are cancelled (default 30)',
      })
      .option('lease', {
        requiresArg: true,
        coerce: numberArg('lease', { integer: false, min: 1 }),
        describe: 'Seconds of the lease an instance holds on the runs it executes (default 30)',
      })
      .example('$0 serve --project shop=stacks.yaml', 'Serve one project on 127.0.0.1:7070, without tokens')
      .example('$0 serve --config kapps-server.yaml --listen 0.0.0.0:7070', 'With tokens, on every interface'),
  handler: async (args) => {
    const { startServer } = await import('../../server/server.js');
    const { createEngine } = await import('../../server/runs/engine-runner.js');
    const say = (text: string): void => void process.stderr.write(`${text}\n`);
    // A bug that escapes a run must not stop the server: it is said, and the server goes on.
    const onStray = (error: unknown): void =>
      say(`kapps serve: internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    process.on('uncaughtException', onStray);
    process.on('unhandledRejection', onStray);
    const server = await startServer({
      listen: args.listen,
      ...(args.backend !== undefined ? { backend: args.backend } : {}),
      ...(args.config !== undefined ? { config: args.config } : {}),
      projects: args.project,
      ...(args.dataDir !== undefined ? { dataDir: args.dataDir } : {}),
      ...(args.maxRuns !== undefined ? { maxRuns: args.maxRuns } : {}),
      ...(args.grace !== undefined ? { graceSeconds: args.grace } : {}),
      ...(args.lease !== undefined ? { leaseSeconds: args.lease } : {}),
      cwd: process.cwd(),
      env: process.env,
      say,
      engine: createEngine,
    });
    process.stdout.write(`kapps serve: listening on ${server.url}\n`);
    await new Promise<void>((resolve) => {
      let signals = 0;
      const onSignal = (signal: NodeJS.Signals): void => {
        signals++;
        if (signals === 1) {
          say(`kapps serve: ${signal}: stopping (no new runs; running ones may finish)`);
          void server.stop().then(resolve, (error: unknown) => {
            onStray(error);
            resolve();
          });
        } else {
          say(`kapps serve: ${signal} again: cancelling the running runs now`);
          server.executor.hurry();
        }
      };
      process.on('SIGTERM', onSignal);
      process.on('SIGINT', onSignal);
    });
    say('kapps serve: stopped');
    process.exit(0);
  },
};
