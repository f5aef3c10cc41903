import type { Socket } from 'node:net';
import type { IncomingMessage, Server } from 'node:http';
import type { Context, Next } from 'koa';

/** Splits one request's time into named phases, for a `Server-Timing` header (RFC-style `name;dur=ms`). */
export class PhaseTimer {
  private last = performance.now();
  readonly phases: [name: string, ms: number][] = [];

  /** Closes the phase that ran since the previous mark. */
  mark(name: string): void {
    const now = performance.now();
    this.phases.push([name, now - this.last]);
    this.last = now;
  }

  /** A phase that ended before this timer started (measured elsewhere). */
  before(name: string, ms: number): void {
    this.phases.push([name, Math.max(0, ms)]);
  }

  header(): string {
    return this.phases.map(([name, ms]) => `${name};dur=${ms.toFixed(2)}`).join(', ');
  }
}

export function phaseTimerOf(ctx: Context): PhaseTimer | undefined {
  return ctx.state.phaseTimer as PhaseTimer | undefined;
}

const acceptedAt = new WeakMap<Socket, number>();
const epochNow = () => performance.timeOrigin + performance.now();

/** Records when the server accepted each connection, for serverTiming's queue phases. */
export function recordAcceptTimes(server: Server): void {
  server.on('connection', (socket: Socket) => acceptedAt.set(socket, epochNow()));
}

/** A timer for `req` that starts with its queue phases, when the client sent `X-Sent-At`. */
export function timerWithQueuePhases(req: IncomingMessage): PhaseTimer {
  const timer = new PhaseTimer();
  const sentAt = Number(req.headers['x-sent-at']);
  if (sentAt > 0) {
    const accepted = acceptedAt.get(req.socket) ?? 0;
    timer.before('queue_accept', accepted - sentAt);
    timer.before('queue_read', epochNow() - Math.max(accepted, sentAt));
  }
  return timer;
}

/**
 * When enabled, the route's later middleware can mark phases and the answer carries Server-Timing.
 * A client on the same machine that sends `X-Sent-At` (epoch ms) also learns where its request
 * waited before the handler ran: `queue_accept` in the kernel's accept queue (0 on a reused
 * connection) and `queue_read` from then until the route began. `respond` closes the handler.
 */
export function serverTiming(enabled: boolean) {
  return async (ctx: Context, next: Next) => {
    if (!enabled) return next();
    const timer = timerWithQueuePhases(ctx.req);
    ctx.state.phaseTimer = timer;
    try {
      await next();
    } finally {
      timer.mark('respond');
      ctx.set('Server-Timing', timer.header()); // a shed or refused capture carries it too
    }
  };
}
