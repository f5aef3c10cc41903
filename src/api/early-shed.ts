import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { ApiError } from '../domain/errors.js';
import { COMMON_RESPONSE_HEADERS, newRequestId } from '../http/request-id.js';
import { FACILITATOR_PREFIX } from '../http/mount-points.js';
import { recordRequest } from '../http/observe-requests.js';
import type { Logger } from '../observability/logger.js';
import type { ApiMetrics } from '../observability/metrics.js';
import { timerWithQueuePhases } from '../observability/phase-timer.js';
import type { CaptureAdmission } from './capture-admission.js';

/** The capture route, as @koa/router names it in metrics and logs. */
export const CAPTURE_ROUTE = `${FACILITATOR_PREFIX}/capture`;

/**
 * The cheap refusal of captures in front of the app: a capture that admission would refuse anyway
 * (CaptureAdmission.earlyRefusal: past the backlog limit, or every slot taken while none may wait or
 * the process is shedding) is answered here, before Koa sees it, with the same 503 UNAVAILABLE,
 * Retry-After, error body, request id, headers (Server-Timing when on), access log line and metrics
 * as a refusal inside Koa's chain. A refusal costs the API about 0.09 ms of CPU this way instead of
 * 0.2-0.24 (a throwaway load of 800 refusals/s, docs/scaling.md); under a 4x overload most captures
 * are refused, on the same two cores as the captures admitted. Nothing is taken here: every other
 * capture goes to `next`, where the route takes its slot only once its merchant is authenticated and
 * its whole body read (a slow body must hold a connection, never a slot). Other requests go to
 * `next` untouched.
 */
export function shedCapturesEarly(next: RequestListener, admission: CaptureAdmission, o: EarlyShedOptions): RequestListener {
  return (req, res) => {
    const refusal = isCapture(req) ? admission.earlyRefusal() : null;
    if (refusal) answerRefusal(req, res, refusal, o);
    else next(req, res);
  };
}

export interface EarlyShedOptions {
  logger: Logger;
  metrics?: ApiMetrics | undefined;
  /** SERVER_TIMING: the answer carries its queue phases and `respond`, as the route's does. */
  serverTiming: boolean;
}

function isCapture(req: IncomingMessage): boolean {
  if (req.method !== 'POST') return false;
  const url = req.url ?? '';
  const query = url.indexOf('?');
  return (query < 0 ? url : url.slice(0, query)) === CAPTURE_ROUTE;
}

function answerRefusal(req: IncomingMessage, res: ServerResponse, refusal: ApiError, o: EarlyShedOptions): void {
  const started = performance.now();
  const timer = o.serverTiming ? timerWithQueuePhases(req) : undefined;
  const requestId = newRequestId();
  const body = JSON.stringify(refusal.toBody(requestId));
  timer?.mark('respond');
  res.writeHead(refusal.status, {
    'X-Request-Id': requestId,
    ...COMMON_RESPONSE_HEADERS,
    ...refusal.headers,
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(body),
    ...(timer ? { 'Server-Timing': timer.header() } : {}),
  });
  res.end(body);
  recordRequest(o.logger, o.metrics, {
    requestId,
    method: 'POST',
    path: CAPTURE_ROUTE,
    matched: CAPTURE_ROUTE,
    status: refusal.status,
    seconds: (performance.now() - started) / 1000,
  });
}
