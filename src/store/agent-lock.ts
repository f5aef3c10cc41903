/** The lease every writer of one operational agent document holds (fencing.ts): FerretDB v1 writes the whole document on any update. */
export const agentLock = (operationalAgentId: string): string => `operational-agent:${operationalAgentId}`;
