import { continueAsNew, log, proxyActivities, sleep } from '@temporalio/workflow';
import type { CaptureActivities } from '../activities/captures.js';

const acts = proxyActivities<CaptureActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds', backoffCoefficient: 2 },
});

export interface CaptureSweeperInput {
  /** A capture younger than this may still be in its request; leave it to the API. */
  olderThanSeconds: number;
  intervalSeconds: number;
}

const ROUNDS_PER_RUN = 200;

/** The backstop behind capture's after-the-answer workflow start: finishes captures that stalled. */
export async function captureSweeperWorkflow(input: CaptureSweeperInput): Promise<void> {
  for (let round = 0; round < ROUNDS_PER_RUN; round++) {
    const r = await acts.resumeStalledCaptures({ olderThanSeconds: input.olderThanSeconds, limit: 500 });
    if (r.resumed > 0 || r.abandoned > 0) log.warn('stalled captures swept', { ...r });
    await sleep(`${input.intervalSeconds} seconds`);
  }
  await continueAsNew<typeof captureSweeperWorkflow>(input);
}
