/** Reads counters from Prometheus text endpoints (the API's and the worker's /metrics). */

export type CounterSample = Map<string, number>;

/** Values of one counter by its `label` value, summed over every endpoint; null when no endpoint has it. */
/** Sums a counter over the urls per value of its labels (joined by a space when several are named). */
export async function scrapeCounter(urls: readonly string[], name: string, labels: string | readonly string[]): Promise<CounterSample | null> {
  const out: CounterSample = new Map();
  let seen = false;
  const re = new RegExp(`^${name}(?:\\{([^}]*)\\})?\\s+([0-9.eE+-]+|NaN)`);
  const labelRes = (typeof labels === 'string' ? [labels] : labels).map((l) => new RegExp(`(?:^|,)\\s*${l}="([^"]*)"`));
  for (const url of urls) {
    let text: string;
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(5000) });
      if (!res.ok) continue;
      text = await res.text();
    } catch {
      continue;
    }
    for (const line of text.split('\n')) {
      const m = re.exec(line);
      if (!m) continue;
      seen = true;
      const key = labelRes.map((re) => re.exec(m[1] ?? '')?.[1] ?? '').join(' ').trim();
      out.set(key, (out.get(key) ?? 0) + Number(m[2]));
    }
  }
  return seen ? out : null;
}

/** after - before, per label value; null when either side lacks the counter. */
export function counterDelta(before: CounterSample | null, after: CounterSample | null): CounterSample | null {
  if (!before || !after) return null;
  return new Map([...after].map(([k, v]) => [k, v - (before.get(k) ?? 0)]));
}

export const total = (s: CounterSample) => [...s.values()].reduce((a, b) => a + b, 0);

/** Gauges' values at each url, in url order, from one fetch per url (a scrape may reset what it reports). */
export async function scrapeGaugesPerUrl(urls: readonly string[], names: readonly string[]): Promise<Map<string, number>[]> {
  return Promise.all(
    urls.map(async (url) => {
      const out = new Map<string, number>();
      try {
        const res = await fetch(url, { signal: AbortSignal.timeout(5000) });
        if (!res.ok) return out;
        const text = await res.text();
        for (const name of names) {
          const m = new RegExp(`^${name}(?:\\{[^}]*\\})?\\s+([0-9.eE+-]+|NaN)`, 'm').exec(text);
          if (m) out.set(name, Number(m[1]));
        }
      } catch {
        // an unreachable endpoint reports nothing
      }
      return out;
    }),
  );
}
