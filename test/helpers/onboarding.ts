/** The harness's onboarding and signing helpers, under the names the tests have always imported. */
export { agentDeps } from '../../tools/harness/agent-deps.js';
export { onboardBorrower, principalFor, type OnboardedBorrower, type OnboardOptions } from '../../tools/harness/onboarding.js';
export { paymentRequiredHeader } from '../../tools/harness/payment-required.js';
export { prepareAndSign, prepareAndSignRequired, signInput, type SignedPayment } from '../../tools/harness/signed-payment.js';
export { signAndSubmit, signStep } from '../../tools/harness/wallet-signing.js';
