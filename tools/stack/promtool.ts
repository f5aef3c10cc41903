import { join } from 'node:path';
import { toolsCacheDir } from '../../src/config/paths.js';
import { goBuild } from './gobuild.js';
import { cachedOrBuilt, toolsBinDir } from './tools.js';
import { findOnPath, isExecutable } from './which.js';

/**
 * Prometheus's promtool, for `promtool check rules` and `promtool test rules` on
 * deploy/prometheus (npm test). Prometheus v3.x tags its Go module v0.3xx.y: this is v3.x's
 * promtool, built from the Go module proxy once per user into the tools cache. `remove_all_sd`
 * leaves out the cloud service discoveries, which rule checks never use, for a shorter build.
 */
export const PROMTOOL_MODULE_VERSION = '0.316.0';
export const PROMTOOL_PACKAGE = `github.com/prometheus/prometheus/cmd/promtool@v${PROMTOOL_MODULE_VERSION}`;
export const PROMTOOL_BUILD_TAGS = ['remove_all_sd'];

type Log = (m: string) => void;

export function promtoolCachePath(cacheDir: string = toolsCacheDir()): string {
  return join(toolsBinDir(cacheDir), `promtool-${PROMTOOL_MODULE_VERSION}`);
}

/** $PROMTOOL_PATH, then promtool on PATH, then the tools cache, else built into it (minutes, once). */
export async function resolvePromtool(opts: { log: Log; signal?: AbortSignal; path?: string | undefined }): Promise<string> {
  const given = opts.path ?? process.env.PROMTOOL_PATH;
  if (given) {
    if (!isExecutable(given)) throw new Error(`PROMTOOL_PATH=${given} is not an executable file`);
    return given;
  }
  const onPath = findOnPath('promtool');
  if (onPath) return onPath;
  const output = promtoolCachePath();
  return cachedOrBuilt(
    output,
    () =>
      goBuild(
        { label: `promtool (Prometheus module v${PROMTOOL_MODULE_VERSION})`, output, target: { kind: 'install', pkg: PROMTOOL_PACKAGE, tags: PROMTOOL_BUILD_TAGS }, expectation: 'first run only, takes several minutes on 2 cores' },
        opts.log,
        opts.signal,
      ),
    opts,
  );
}
