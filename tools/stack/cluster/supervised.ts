import type { StackHandle } from '../stack.js';
import type { SupervisedStack } from '../supervisor.js';
import type { Replicas } from './replicas.js';

/**
 * The stack's parts and the cluster's replicas (api-2, worker-2) as one SupervisedStack, so that one
 * StackSupervisor restarts either kind the same way and stops everything on a crash loop of any.
 */
export function supervisedWithReplicas(stack: StackHandle, replicas: Replicas | undefined): SupervisedStack {
  return {
    parts: () => [...stack.parts(), ...(replicas?.parts() ?? [])],
    restartPart: (name) => (replicas?.parts().some((p) => p.name === name) ? replicas.restart(name) : stack.restartPart(name)),
  };
}
