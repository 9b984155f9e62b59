/**
 * The process server: a small Node child of kapps that spawns steps on its behalf (see `forkProcessServer`).
 * It runs each request with `spawnStep` and reports over IPC: `started` (pid), `output` chunks (only when asked
 * for), and the `result`. It ignores SIGINT/SIGTERM/SIGHUP/SIGQUIT (kapps owns them and sends `cancel`), and
 * exits when kapps goes away (the IPC channel closes, also when kapps was killed with SIGKILL), stopping every
 * step it knows of. With KAPPS_INPROCESS_SPAWN=1 kapps starts steps itself and uses it only as that watchdog: it
 * sends `watch`/`unwatch` with the process groups of its steps. The requests and messages are in
 * `server-protocol.ts`.
 */
import { killAllProcessGroups, registerProcessGroup, unregisterProcessGroup } from './process-groups.js';
import { onRequest, sendMessage, sendMessages, type ServerMessage } from './server-protocol.js';
import { spawnStep } from './spawn.js';

const running = new Map<number, AbortController>();

/** Messages to kapps, sent together at the end of this turn of the event loop (see `sendMessages`). */
let outbox: ServerMessage[] | undefined;

function send(message: ServerMessage): void {
  if (outbox) {
    outbox.push(message);
    return;
  }
  outbox = [message];
  setImmediate(() => {
    const box = outbox ?? [];
    outbox = undefined;
    sendMessages(box);
  });
}

for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT'] as const) process.on(signal, () => undefined);
process.on('disconnect', () => {
  for (const c of running.values()) c.abort();
  // Groups watched for kapps (KAPPS_INPROCESS_SPAWN=1): the same SIGTERM (sent again to our own steps' groups,
  // which is harmless).
  killAllProcessGroups('SIGTERM');
  // Give the steps' SIGTERM a moment, then go; what ignores it is killed with the group.
  setTimeout(() => {
    killAllProcessGroups('SIGKILL');
    process.exit(0);
  }, 200).unref();
});

onRequest((message) => {
  switch (message.type) {
    case 'run': {
      const controller = new AbortController();
      running.set(message.id, controller);
      const id = message.id;
      void spawnStep(
        {
          ...message.req,
          signal: controller.signal,
          onStart: (pid) => send({ type: 'started', id, pid }),
          ...(message.stream ? { onOutput: (stream, text) => send({ type: 'output', id, stream, text }) } : {}),
        },
        { syncChecks: true },
      ).then(
        (result) => {
          running.delete(id);
          send({ type: 'result', id, result });
        },
        (error: unknown) => {
          running.delete(id);
          send({ type: 'error', id, message: error instanceof Error ? error.message : String(error) });
        },
      );
      break;
    }
    case 'cancel':
      running.get(message.id)?.abort();
      break;
    case 'kill-all':
      killAllProcessGroups(message.signal);
      break;
    case 'watch':
      registerProcessGroup(message.pgid);
      break;
    case 'unwatch':
      unregisterProcessGroup(message.pgid);
      break;
  }
});

// Once kapps is gone and every step reaped, the process ends at its exit event instead of tearing Node's
// environment down (its heap unmapped page by page), as kapps does (src/cli/exit-fast.ts).
process.on('exit', (code) => (process as unknown as { reallyExit(code: number): void }).reallyExit(code));

// Listening: kapps may start steps that count on this process to stop them should kapps die.
sendMessage({ type: 'ready' });
