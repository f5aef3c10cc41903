/**
 * Which redirect URIs dynamic client registration accepts: loopback http (any port, RFC 8252
 * native apps) or https on a named agent host (OAUTH_DCR_ALLOWED_HOSTS). Pure.
 */
const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);

export function isLoopbackHost(hostname: string): boolean {
  return LOOPBACK_HOSTS.has(hostname.toLowerCase());
}

/** null when `uri` may be registered, else a sentence naming the URI and the rule it breaks. */
export function redirectUriProblem(uri: string, allowedHosts: readonly string[]): string | null {
  const url = URL.parse(uri);
  const rule =
    'only loopback http redirect URIs (http://127.0.0.1:<port>, http://[::1]:<port>, http://localhost:<port>)' +
    (allowedHosts.length ? ` or https URIs on ${allowedHosts.join(', ')}` : '') +
    ' are accepted';
  if (!url) return `redirect_uris: ${JSON.stringify(uri)} is not an absolute URI; ${rule}.`;
  if (url.hash || uri.includes('#')) return `redirect_uris: ${uri} must not contain a fragment.`;
  if (url.username || url.password) return `redirect_uris: ${uri} must not carry credentials.`;
  if (url.protocol === 'http:' && isLoopbackHost(url.hostname)) return null;
  if (url.protocol === 'https:' && allowedHosts.includes(url.hostname.toLowerCase())) return null;
  return `redirect_uris: ${uri} is not allowed; ${rule}.`;
}

/** An http(s) origin on a loopback host (allowed CORS origins in development, src/http/cors.ts). */
export function isLoopbackOrigin(origin: string): boolean {
  const url = URL.parse(origin);
  return !!url && (url.protocol === 'http:' || url.protocol === 'https:') && isLoopbackHost(url.hostname);
}

/**
 * The redirect URIs a client ID metadata document may list: loopback http (native agent hosts),
 * https on the document's own host (the host that vouches for the client, shown at sign-in), or
 * https on a named agent host (OAUTH_DCR_ALLOWED_HOSTS). Pure.
 */
export function cimdRedirectUriProblem(uri: string, clientIdUrl: string, allowedHosts: readonly string[]): string | null {
  const ownHost = new URL(clientIdUrl).hostname.toLowerCase();
  const url = URL.parse(uri);
  const rule = `a client metadata document may list loopback http redirect URIs or https URIs on its own host (${ownHost})` +
    (allowedHosts.length ? ` or on ${allowedHosts.join(', ')}` : '');
  if (!url) return `redirect_uris: ${JSON.stringify(uri)} is not an absolute URI; ${rule}.`;
  if (url.hash || uri.includes('#')) return `redirect_uris: ${uri} must not contain a fragment.`;
  if (url.username || url.password) return `redirect_uris: ${uri} must not carry credentials.`;
  if (url.protocol === 'http:' && isLoopbackHost(url.hostname)) return null;
  const host = url.hostname.toLowerCase();
  if (url.protocol === 'https:' && (host === ownHost || allowedHosts.includes(host))) return null;
  return `redirect_uris: ${uri} is not allowed; ${rule}.`;
}
