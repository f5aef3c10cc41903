/** The agent service functions (src/agents/) behind the tools. */
export { getBorrowerStatus, registerBorrower } from '../../agents/borrowers.js';
export { acceptCreditFacility } from '../../agents/facility.js';
export { registerAgentKey, rotateAgentKey } from '../../agents/agent-keys.js';
export { claimHandle } from '../../agents/handles.js';
export { preparePayment } from '../../agents/prepare-payment.js';
export { executeRepayment } from '../../agents/repayment.js';
