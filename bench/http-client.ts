import { Agent, request as httpRequest, type ClientRequest } from 'node:http';

export interface HttpAnswer {
  status: number;
  body: string;
  headers: Record<string, string | string[] | undefined>;
}

/**
 * A lean keep-alive HTTP/1.1 client for the load generator: node:http costs the client less CPU per
 * request than fetch, which matters when the client shares 2 cores with the stack it measures.
 * Every request in flight is tracked, so a bounded run can abort what is still open at its end.
 */
export class BenchHttp {
  private readonly agent = new Agent({ keepAlive: true, maxSockets: Infinity, maxFreeSockets: 1024 });
  private readonly open = new Set<ClientRequest>();

  get inFlight(): number {
    return this.open.size;
  }

  send(url: URL, method: 'GET' | 'POST', headers: Record<string, string>, body?: string): Promise<HttpAnswer> {
    return new Promise((resolve, reject) => {
      const req = httpRequest(
        { host: url.hostname, port: url.port, path: url.pathname + url.search, method, agent: this.agent, headers: body === undefined ? headers : { ...headers, 'content-length': Buffer.byteLength(body) } },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            this.open.delete(req);
            resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), headers: res.headers });
          });
          res.on('error', (err) => {
            this.open.delete(req);
            reject(err);
          });
        },
      );
      this.open.add(req);
      req.on('error', (err) => {
        this.open.delete(req);
        reject(err);
      });
      req.end(body);
    });
  }

  /** Aborts every request still open (their promises reject) and closes idle sockets. */
  abortAll(): number {
    const n = this.open.size;
    for (const req of this.open) req.destroy(new Error('aborted at the end of the run'));
    this.open.clear();
    return n;
  }

  close(): void {
    this.abortAll();
    this.agent.destroy();
  }
}
