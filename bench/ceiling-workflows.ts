// Bundled by the bench's own in-process Worker (bench/ceilings.ts) for the Temporal ceiling:
// the least a workflow can do that still has a start, one signal and a completion.
import { condition, defineSignal, setHandler } from '@temporalio/workflow';

export const benchGoSignal = defineSignal('benchGo');

export async function benchSignalWorkflow(): Promise<void> {
  let go = false;
  setHandler(benchGoSignal, () => {
    go = true;
  });
  await condition(() => go);
}
