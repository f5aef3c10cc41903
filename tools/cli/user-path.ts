import { resolve } from 'node:path';

/**
 * A path the operator typed, made absolute against the directory they ran the command in: npm runs
 * scripts in the package root and keeps the caller's directory in INIT_CWD.
 */
export function userPath(path: string): string {
  return resolve(process.env.INIT_CWD ?? process.cwd(), path);
}
