import { createServer, type Server } from 'node:http';
import { timingSafeEqual } from 'node:crypto';
import type { Registry } from 'prom-client';

/** Whether an Authorization header carries the metrics token (constant-time comparison). */
export function presentsMetricsToken(authorization: string | undefined, token: string): boolean {
  const presented = Buffer.from(/^Bearer (.+)$/i.exec(authorization ?? '')?.[1] ?? '');
  const expected = Buffer.from(token);
  return presented.length === expected.length && timingSafeEqual(presented, expected);
}

/** The worker's Prometheus endpoint: GET /metrics on 127.0.0.1 only (put a scraper beside it). */
export function serveMetrics(registry: Registry, port: number, token: string | undefined): Promise<Server> {
  const server = createServer((req, res) => {
    if (req.method !== 'GET' || req.url !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: scrape GET /metrics');
      return;
    }
    if (token && !presentsMetricsToken(req.headers.authorization, token)) {
      res.writeHead(401, { 'content-type': 'text/plain', 'www-authenticate': 'Bearer' }).end('send Authorization: Bearer <METRICS_TOKEN>');
      return;
    }
    registry.metrics().then(
      (text) => res.writeHead(200, { 'content-type': registry.contentType }).end(text),
      () => res.writeHead(500, { 'content-type': 'text/plain' }).end('metrics unavailable'),
    );
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
}
