/**
 * Runs the normal-load levels (half and 80 % of the peak's steady settled/s) with the same open-loop
 * machinery as the sweep, merchants polling once a second, after the sweep's backlog has settled
 * (bounded) so the levels measure normal load rather than the overloaded levels' leftovers.
 */
import { waitForQuietPipeline } from './ceilings.js';
import { waitForStoreBacklog } from './growth.js';
import { describeLevel, runLevel, type LevelFigures, type LevelSettings } from './level.js';
import { steadySettledRate } from './summary.js';
import { NORMAL_LOAD, normalLoadFigures, normalLoadRates, type NormalLoadFigures, type NormalLoadKey } from './normal-load.js';

export interface NormalLevel {
  level: LevelFigures;
  figures: NormalLoadFigures;
}

export type NormalLevels = Record<NormalLoadKey, NormalLevel | null>;

export async function runNormalLevels(
  settings: LevelSettings,
  peak: Pick<LevelFigures, 'pacedSettledPerSec' | 'sustainedSettledPerSec' | 'settledPerSec' | 'storeConfirmedPerSec'>,
  earlierPaymentIds: readonly string[],
  o: { seconds: number; backlogWaitSeconds: number; quietWaitSeconds: number; log: (line: string) => void },
): Promise<NormalLevels> {
  const peakRate = steadySettledRate(peak);
  const rates = normalLoadRates(peakRate);
  if (!rates) {
    o.log('normal-load levels skipped: no settled payments at the peak');
    return { half: null, eighty: null };
  }
  const backlog = await waitForStoreBacklog(settings.w, earlierPaymentIds, o.backlogWaitSeconds);
  // CONFIRMED comes before the payments' workflows are told (spread behind the worker's other work):
  // the overloaded levels' thousands of workflows finishing would be measured as normal load.
  const quiet = await waitForQuietPipeline(settings.w, o.quietWaitSeconds * 1000);
  o.log(`before the normal-load levels: ${backlog.left} payments neither CONFIRMED nor FAILED after waiting ${backlog.waitedSeconds.toFixed(0)} s; ${quiet.runningPaymentWorkflows} payment workflows still running after ${(quiet.waitedMs / 1000).toFixed(0)} s more`);
  const out: NormalLevels = { half: null, eighty: null };
  for (const key of Object.keys(NORMAL_LOAD) as NormalLoadKey[]) {
    const level = await runLevel(settings, `${rates[key]}/s (${NORMAL_LOAD[key]}x peak)`, rates[key], o.seconds);
    o.log(describeLevel(level));
    out[key] = { level, figures: normalLoadFigures(level, peakRate) };
  }
  return out;
}
