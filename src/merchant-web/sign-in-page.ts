import { escapeHtml } from '../http/html.js';
import { consolePage } from './layout.js';

export interface SignInView {
  next: string;
  stepUp: boolean;
  /** The issuer merchant tokens must come from (MERCHANT_JWT_ISSUER). */
  issuer: string;
  devTools: boolean;
}

/** The console's sign-in: the merchant user brings the token their identity provider issued. */
export function signInPage(v: SignInView): string {
  const dev = v.devTools
    ? `<p class="muted">Development stack: issue a token with the dev issuer, <code>npm run -s admin -- jwt issue --merchant &lt;merchantId&gt; --mfa</code> (leave out <code>--mfa</code> for a session without step-up; <code>--permissions x402:settle:read</code> for a read-only user).</p>`
    : '';
  return consolePage(
    'Sign in',
    `<h1>${v.stepUp ? 'Step up: sign in again with MFA' : 'Merchant console sign-in'}</h1>
${v.stepUp ? '<p class="notice">Refunds, voids and webhook changes need a multi-factor sign-in from the last 10 minutes. Sign in with your identity provider again, with MFA, and paste the new token.</p>' : ''}
<p>Sign in with the token your merchant identity provider (<span class="mono">${escapeHtml(v.issuer)}</span>) issued to you. The console acts with exactly what that token allows through the REST API, and only until it expires.</p>
<form method="post" action="/merchant/sign-in" id="sign-in">
<input type="hidden" name="next" value="${escapeHtml(v.next)}">
<label for="token">Your user token (JWT)</label>
<textarea id="token" name="token" rows="6" required autocomplete="off" spellcheck="false"></textarea>
<button type="submit" id="sign-in-button">Sign in</button>
</form>
${dev}
<p class="muted">API keys are for servers and are not accepted here.</p>`,
    null,
  );
}
