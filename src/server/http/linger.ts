/**
 * Closing a connection whose request the server answered before reading all of it (a body too large, a body type
 * it does not take, a request that arrives while it stops): the answer carries `Connection: close`, and node would
 * close the socket as soon as the answer is written. Bytes the client is still sending then meet a closed socket:
 * the kernel answers them with a reset, and a client still writing sees `EPIPE` or `ECONNRESET` — often before it
 * has read the answer, which the reset throws away. So the socket lingers instead: the answer is written and the
 * sending side shut, what still arrives is read and dropped, and the socket is closed once the client has sent
 * everything, or has sent nothing for LINGER_IDLE_MS, or after LINGER_MAX_MS in all.
 */
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';

/** How long a closing connection waits for more of a request it refused, with nothing arriving. */
const LINGER_IDLE_MS = 2_000;
/** How long, at most, a closing connection reads what it will not use. */
const LINGER_MAX_MS = 10_000;

/** Make every answer sent with `Connection: close` before its request was read linger; and stop lingering on close. */
export function registerLingeringClose(app: FastifyInstance): void {
  const lingering = new Set<Socket>();
  app.addHook('onSend', (request, reply, payload, done) => {
    const socket = request.raw.socket as Socket | null;
    if (socket && !request.raw.complete && /\bclose\b/i.test(String(reply.getHeader('connection') ?? ''))) {
      lingerOnClose(socket, lingering);
    }
    done(null, payload);
  });
  app.addHook('onClose', (_instance, done) => {
    for (const socket of lingering) socket.destroy();
    lingering.clear();
    done();
  });
}

/**
 * Replace `socket.destroySoon` — what node's HTTP server calls once a `Connection: close` answer is finished — with
 * a lingering close. The HTTP server reads the socket with `allowHalfOpen`, so ending it shuts only our side.
 */
function lingerOnClose(socket: Socket, lingering: Set<Socket>): void {
  socket.destroySoon = function lingeringClose(this: Socket): void {
    lingering.add(socket);
    const close = (): void => {
      clearTimeout(limit);
      lingering.delete(socket);
      socket.destroy();
    };
    const limit = setTimeout(close, LINGER_MAX_MS);
    limit.unref();
    socket.setTimeout(LINGER_IDLE_MS, close);
    socket.once('end', close);
    socket.once('close', close);
    socket.end();
    // Node's parser still reads the request's body and drops it; without one (its request done), drop what comes.
    socket.resume();
  };
}
