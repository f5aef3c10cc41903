import { randomUUID } from 'node:crypto';
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { Logger } from '../observability/logger.js';
import type { ApiMetrics } from '../observability/metrics.js';
import type { CaptureAdmission } from './capture-admission.js';

export const CAPTURE_PATH = '/api/v1/facilitator/capture';
const CAPTURE_ROUTE = CAPTURE_PATH; // the route label Koa's router gives the same requests
const SUMMARY_EVERY_MS = 10_000;

/**
 * Overload is shed at the door. When the capture admission (capture-admission.ts) would refuse a
 * capture, the answer is written here, before Koa, the OAuth provider's middleware and the
 * routers run: the same 503 UNAVAILABLE body, Retry-After and headers the error middleware would
 * write, with no store work and no body read (Node discards it). Measured as a 4x-overload bench
 * level: the CPU the API spends per refused capture is what decides how much settling the box
 * still does (docs/scaling.md). Instead of an access-log line per refusal, one summary line every
 * 10 s counts them; the metrics count each one (x402_captures_shed_total, HTTP requests by status).
 */
export function withEarlyShed(next: RequestListener, o: { admission: CaptureAdmission; metrics?: ApiMetrics | undefined; logger: Logger }): RequestListener & { stop(): void } {
  let shedSinceSummary = 0;
  const summary = setInterval(() => {
    if (shedSinceSummary === 0) return;
    o.logger.info('captures shed at the door', { count: shedSinceSummary, seconds: SUMMARY_EVERY_MS / 1000 });
    shedSinceSummary = 0;
  }, SUMMARY_EVERY_MS);
  summary.unref();
  const listener = (req: IncomingMessage, res: ServerResponse) => {
    if (req.method === 'POST' && isCapturePath(req.url)) {
      const refused = o.admission.shedNow();
      if (refused) {
        const requestId = `req_${randomUUID()}`;
        const body = JSON.stringify(refused.toBody(requestId));
        res.writeHead(refused.status, {
          ...refused.headers,
          'Content-Type': 'application/json; charset=utf-8',
          'Content-Length': Buffer.byteLength(body),
          'X-Request-Id': requestId,
          'Cache-Control': 'no-store',
          'X-Content-Type-Options': 'nosniff',
        });
        res.end(body);
        shedSinceSummary++;
        o.metrics?.httpRequests.inc({ route: CAPTURE_ROUTE, method: 'POST', status: String(refused.status) });
        return;
      }
    }
    void next(req, res);
  };
  return Object.assign(listener, { stop: () => clearInterval(summary) });
}

/** The capture path exactly, with or without a query string (Koa's router ignores the query too). */
function isCapturePath(url: string | undefined): boolean {
  if (!url?.startsWith(CAPTURE_PATH)) return false;
  return url.length === CAPTURE_PATH.length || url[CAPTURE_PATH.length] === '?';
}
