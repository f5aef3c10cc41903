/**
 * A map that keeps at most `capacity` entries and forgets the least recently used one first.
 * Map iteration order is insertion order, so a hit is moved to the back by re-inserting it.
 */
export class Lru<V> {
  private readonly map = new Map<string, V>();

  constructor(readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError('capacity must be a positive integer');
  }

  get size(): number {
    return this.map.size;
  }

  get(key: string): V | undefined {
    const value = this.map.get(key);
    if (value === undefined) return undefined;
    this.map.delete(key);
    this.map.set(key, value);
    return value;
  }

  set(key: string, value: V): void {
    this.map.delete(key);
    if (this.map.size >= this.capacity) this.map.delete(this.map.keys().next().value as string);
    this.map.set(key, value);
  }

  /** The value without making it recently used. */
  peek(key: string): V | undefined {
    return this.map.get(key);
  }

  delete(key: string): void {
    this.map.delete(key);
  }

  /** Every entry, least recently used first. */
  entries(): IterableIterator<[string, V]> {
    return this.map.entries();
  }
}
