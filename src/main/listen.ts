import { createServer, type RequestListener, type Server } from 'node:http';
import type { Env } from '../config/env.js';

/**
 * The API's HTTP servers. libuv accepts one connection per listening handle per event-loop turn
 * (libuv #3696), and under load a turn of the API's loop lasts tens of ms, so a burst of new
 * connections waited in the kernel's accept queue for seconds where no admission could answer
 * them (docs/scaling.md). Given inherited duplicates of one listening socket (API_LISTEN_FDS, from
 * the stack's launcher), the API serves each with its own server and accepts that many per turn;
 * otherwise it binds API_HOST:API_PORT itself with one.
 */
export function listenApi(env: Env, handler: RequestListener, configure: (server: Server) => void, onListening: () => void): Server[] {
  const fds = env.API_LISTEN_FDS ?? [];
  let waiting = Math.max(1, fds.length);
  const listening = () => {
    if (--waiting === 0) onListening();
  };
  const server = () => {
    const s = createServer(handler);
    configure(s);
    return s;
  };
  if (fds.length === 0) return [server().listen({ host: env.API_HOST, port: env.API_PORT, backlog: env.API_LISTEN_BACKLOG }, listening)];
  // The (handle, backlog) form: Node ignores `backlog` inside { fd } options, and every listen()
  // on the shared socket sets its backlog anew.
  return fds.map((fd) => server().listen({ fd }, env.API_LISTEN_BACKLOG, listening));
}
