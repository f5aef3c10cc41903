/** What each tool call of one HTTP request ended as, filled by the tool wrapper and read by the call log. */
export interface ToolCallOutcome {
  tool: string;
  outcome: 'ok' | 'tool_error' | 'internal_error';
  errorCode?: string;
}

export class CallRecord {
  private readonly outcomes = new Map<string | number, ToolCallOutcome>();

  set(rpcId: string | number, outcome: ToolCallOutcome): void {
    this.outcomes.set(rpcId, outcome);
  }

  get(rpcId: string | number): ToolCallOutcome | undefined {
    return this.outcomes.get(rpcId);
  }
}
