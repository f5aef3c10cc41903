import { readFileSync } from 'node:fs';

/** What a package README tells a reader to run: its install lines and its example files. */
export interface ReadmeExamples {
  /** The `npm install` arguments of every ```sh install block, in order. */
  installs: string[][];
  /** The code of every ```js file=<name> block, by file name. */
  files: Record<string, string>;
}

const FENCE = /^```(\w+)([^\n]*)\n([\s\S]*?)^```$/gm;

/** Reads the examples out of the markdown itself, so the test runs exactly what a reader copies. */
export function readmeExamples(path: string): ReadmeExamples {
  const text = readFileSync(path, 'utf8');
  const out: ReadmeExamples = { installs: [], files: {} };
  for (const [, lang, info, body] of text.matchAll(FENCE)) {
    const attrs = (info ?? '').trim().split(/\s+/);
    if (lang === 'sh' && attrs.includes('install')) {
      for (const line of body!.split('\n').filter((l) => l.startsWith('npm install '))) out.installs.push(line.slice('npm install '.length).trim().split(/\s+/));
    }
    const file = attrs.find((a) => a.startsWith('file='))?.slice('file='.length);
    if (lang === 'js' && file) out.files[file] = body!;
  }
  return out;
}
