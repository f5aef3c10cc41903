import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { ApiError } from '../domain/errors.js';
import { mcpHttpError, type McpHttpErrorCode } from './mcp-errors.js';
import type { Logger } from '../observability/logger.js';

/**
 * Requests Node refuses before Koa sees them: headers over its size limit (431) or bytes that are
 * not HTTP (400). Node's own answer is a bare status line; this one carries the error shape of the
 * path it was meant for (JSON-RPC for /mcp), so clients read it like any other refusal.
 */
export function clientErrorHandler(logger: Logger) {
  return (err: Error & { code?: string; rawPacket?: Buffer }, socket: Duplex): void => {
    if (err.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const requestId = `req_${randomUUID()}`;
    const error = err.code === 'HPE_HEADER_OVERFLOW' ? ApiError.headersTooLarge() : new ApiError('INVALID_REQUEST', 'The request is not valid HTTP.');
    const status = error.status;
    const forMcp = /^[A-Z]+ \/mcp[\s/?]/.test(err.rawPacket?.toString('latin1', 0, 64) ?? '');
    const json = JSON.stringify(forMcp ? mcpHttpError(status, error.code as McpHttpErrorCode, error.message, requestId).body : error.toBody(requestId));
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(json)}\r\n` +
        `X-Request-Id: ${requestId}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n${json}`,
    );
    logger.info('http refused before routing', { requestId, status, reason: err.code });
  };
}
