import { throwawayStackSource } from '../tools/stack/throwaway-source.js';
import { startStack, type StackHandle } from '../tools/stack/stack.js';

/** A stack of the bench's own in `dir` (free ports): production mode, quiet logs, Server-Timing on, credit enough for any run; `env` on top. */
export async function benchStack(dir: string, env: Record<string, string> = {}): Promise<StackHandle> {
  const source: NodeJS.ProcessEnv = {
    ...(await throwawayStackSource(dir)),
    NODE_ENV: 'production',
    LOG_LEVEL: 'warn',
    SERVER_TIMING: '1',
    DEFAULT_CREDIT_LIMIT: '1000000000000',
    ...env,
  };
  return startStack({ source, quiet: true, headless: true });
}
