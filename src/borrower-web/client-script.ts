/** The browser-side wallet helpers, shared with the merchant console (src/http/wallet-script.ts). */
export { WALLET_HELPERS } from '../http/wallet-script.js';
