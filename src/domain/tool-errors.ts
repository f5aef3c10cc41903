/**
 * Errors agent tools return. The MCP layer turns them into a tool result with isError whose text
 * is {"error":{code,message,...details}}; the signing page into the API error shape.
 */
export const TOOL_ERROR_CODES = [
  'INVALID_INPUT',
  'IDEMPOTENCY_KEY_CONFLICT',
  'NOT_FOUND',
  'STAGE_REQUIRED',
  'BORROWER_NOT_ACTIVE',
  'OPERATIONAL_AGENT_REQUIRED',
  'HANDLE_TAKEN',
  'AGENT_KEY_EXISTS',
  'POLICY_DENIED',
  'INSUFFICIENT_CREDIT',
  'SIGNATURE_INVALID',
  'SIGNING_REQUEST_CLOSED',
  'UNAVAILABLE',
] as const;
export type ToolErrorCode = (typeof TOOL_ERROR_CODES)[number];

export class ToolError extends Error {
  override readonly name = 'ToolError';
  constructor(
    readonly code: ToolErrorCode,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
  }

  toJSON(): { error: Record<string, unknown> } {
    return { error: { code: this.code, message: this.message, ...this.details } };
  }
}
