import { SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';

/**
 * The revisions served natively per request (`_meta` envelope, no `initialize`), by the v2 server
 * package (@modelcontextprotocol/server); `server/discover` lists exactly these.
 */
export const MODERN_PROTOCOL_VERSIONS = ['2026-07-28'] as const;

/** Every revision /mcp speaks: the modern ones, then those negotiated through `initialize` (v1 SDK). */
export const SERVED_PROTOCOL_VERSIONS: readonly string[] = [...MODERN_PROTOCOL_VERSIONS, ...SUPPORTED_PROTOCOL_VERSIONS];
