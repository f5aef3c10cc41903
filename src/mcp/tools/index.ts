import { getBorrowerStatusTool, registerBorrowerTool } from './borrower.js';
import { registerAgentKeyTool, rotateAgentKeyTool } from './agent-keys.js';
import type { ToolDefinition } from './define.js';
import { acceptCreditFacilityTool } from './facility.js';
import { claimHandleTool } from './handle.js';
import { prepareX402PaymentTool } from './payment.js';
import { executeRepaymentTool } from './repayment.js';

/** The eight agent tools, in onboarding order. */
export const TOOLS: readonly ToolDefinition[] = [
  registerBorrowerTool,
  getBorrowerStatusTool,
  acceptCreditFacilityTool,
  registerAgentKeyTool,
  rotateAgentKeyTool,
  claimHandleTool,
  prepareX402PaymentTool,
  executeRepaymentTool,
];
