import { createServer } from 'node:net';

/** A listening socket the stack opens for the API, to hand over as inherited descriptors. */
export interface ApiListener {
  /** What to spawn the API with for `count` accepting handles: our descriptor that many times, and the child's view of them. */
  handOver(count: number): { inheritFds: number[]; API_LISTEN_FDS: string };
  /** Closes our copy: call right after spawning, before this process's loop can accept on it. */
  close(): void;
}

/**
 * Binds the API's address once, here, so the API process can serve several duplicates of the one
 * socket (API_LISTEN_FDS, src/main/listen.ts) and accept several connections per event-loop turn.
 * Node 20 has no SO_REUSEPORT (`reusePort` arrived in 22.12), and only a parent can hand a process
 * duplicates of a descriptor.
 */
export async function openApiListener(host: string, port: number, backlog: number): Promise<ApiListener> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host, port, backlog }, () => resolve());
  });
  const fd = (server as unknown as { _handle?: { fd?: number } })._handle?.fd;
  if (typeof fd !== 'number' || fd < 0) {
    server.close();
    throw new Error('the API listener has no descriptor to hand over (not a Unix platform?)');
  }
  return {
    handOver: (count) => ({ inheritFds: Array<number>(count).fill(fd), API_LISTEN_FDS: inheritedFdList(count) }),
    close: () => server.close(),
  };
}

/** The child's view of `count` inherited duplicates: fds 3, 4, ... in spawn's stdio order. */
export function inheritedFdList(count: number): string {
  return Array.from({ length: count }, (_, i) => 3 + i).join(',');
}
