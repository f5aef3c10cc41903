import type { AgentDeps } from '../agents/deps.js';
import type { AuthDeps } from '../auth/deps.js';

/** What the borrower's pages use: the agent services' dependencies and the authorization server's. */
export interface BorrowerWebDeps extends AgentDeps, AuthDeps {}
