/** Reads until `ok` holds and returns that value; throws naming `what` and the last value seen after `timeoutMs`. */
export async function until<T>(what: string, read: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let v = await read();
  while (!ok(v)) {
    if (Date.now() > deadline) throw new Error(`${what}: last ${JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? x.toString() : x))}`);
    await new Promise((r) => setTimeout(r, 250));
    v = await read();
  }
  return v;
}
