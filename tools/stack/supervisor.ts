import { describeExit, type ExitInfo } from './processes.js';

/**
 * How the embedded stack answers a part that died: start it again after a backoff that doubles
 * with each restart, and give up only on a crash loop (more than `maxRestarts` in `windowMs`).
 */
export interface RestartPolicy {
  maxRestarts: number;
  windowMs: number;
  initialDelayMs: number;
  maxDelayMs: number;
}

export const DEFAULT_RESTART_POLICY: RestartPolicy = { maxRestarts: 5, windowMs: 60_000, initialDelayMs: 500, maxDelayMs: 8_000 };

export type RestartDecision = { restart: true; delayMs: number; attempt: number } | { restart: false; crashes: number };

/** A part's crash history and what to do about its next crash; pure, its clock passed in. */
export class CrashLoopGuard {
  private readonly crashes = new Map<string, number[]>();

  constructor(private readonly policy: RestartPolicy = DEFAULT_RESTART_POLICY) {}

  onCrash(part: string, nowMs: number): RestartDecision {
    const recent = (this.crashes.get(part) ?? []).filter((t) => nowMs - t < this.policy.windowMs);
    recent.push(nowMs);
    this.crashes.set(part, recent);
    if (recent.length > this.policy.maxRestarts) return { restart: false, crashes: recent.length };
    const delayMs = Math.min(this.policy.maxDelayMs, this.policy.initialDelayMs * 2 ** (recent.length - 1));
    return { restart: true, delayMs, attempt: recent.length };
  }
}

export interface SupervisedStack {
  restartPart(name: string): Promise<void>;
  parts(): ReadonlyArray<{ name: string; logFile: string | undefined }>;
}

export interface SupervisorOptions {
  log: (message: string) => void;
  /** Called once when a part crash-loops: the caller stops everything. */
  giveUp: (reason: string) => void;
  policy?: RestartPolicy;
  now?: () => number;
}

/**
 * Restarts the parts of a running stack that exit without being asked to. A restart that itself
 * fails counts as another crash of that part, so a part that cannot come back ends in giveUp.
 */
export class StackSupervisor {
  private readonly guard: CrashLoopGuard;
  private readonly restarting = new Set<string>();
  private stopped = false;

  constructor(
    private readonly stack: SupervisedStack,
    private readonly opts: SupervisorOptions,
  ) {
    this.guard = new CrashLoopGuard(opts.policy);
  }

  stop(): void {
    this.stopped = true;
  }

  partExited(part: string, info: ExitInfo): void {
    this.crashed(part, describeExit(info));
  }

  private crashed(part: string, why: string): void {
    if (this.stopped || this.restarting.has(part)) return;
    const decision = this.guard.onCrash(part, (this.opts.now ?? Date.now)());
    const file = this.stack.parts().find((p) => p.name === part)?.logFile;
    const output = file ? `its log, ${file}` : `its output above, the lines prefixed '${part.padEnd(9)}|'`;
    if (!decision.restart) {
      this.stopped = true;
      this.opts.giveUp(`${part} crashed ${decision.crashes} times within ${Math.round((this.opts.policy ?? DEFAULT_RESTART_POLICY).windowMs / 1000)} s (last: ${why}); stopping everything. See ${output}.`);
      return;
    }
    this.opts.log(`${part} exited unexpectedly (${why}); restarting it in ${(decision.delayMs / 1000).toFixed(1)} s (restart ${decision.attempt} within a minute)`);
    this.restarting.add(part);
    const started = Date.now();
    void new Promise((r) => setTimeout(r, decision.delayMs))
      .then(() => (this.stopped ? undefined : this.stack.restartPart(part)))
      .then(
        () => {
          this.restarting.delete(part);
          if (!this.stopped) this.opts.log(`${part} is back (${((Date.now() - started) / 1000).toFixed(1)} s after it exited)`);
        },
        (err: unknown) => {
          this.restarting.delete(part);
          this.crashed(part, `restart failed: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`);
        },
      );
  }
}
