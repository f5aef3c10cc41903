/**
 * Runs a settler key's transaction sends one at a time within a process. Every sender of the key
 * (each settlement shard, retries, repayments) goes through the same queue, so each send reads the
 * pending nonce after the previous one was accepted by the node: no two sends pick the same nonce.
 * Across processes each worker needs its own settler key (docs/scaling.md).
 */
export class SendQueue {
  private tail: Promise<unknown> = Promise.resolve();

  run<T>(send: () => Promise<T>): Promise<T> {
    const result = this.tail.then(send, send);
    this.tail = result.catch(() => undefined);
    return result;
  }
}
