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

  header(): string {
    return this.phases.map(([name, ms]) => `${name};dur=${ms.toFixed(2)}`).join(', ');
  }
}

export function phaseTimerOf(ctx: Context): PhaseTimer | undefined {
  return ctx.state.phaseTimer as PhaseTimer | undefined;
}

/** When enabled, the route's later middleware can mark phases and the answer carries Server-Timing. */
export function serverTiming(enabled: boolean) {
  return async (ctx: Context, next: Next) => {
    if (!enabled) return next();
    const timer = new PhaseTimer();
    ctx.state.phaseTimer = timer;
    await next();
    ctx.set('Server-Timing', timer.header());
  };
}
