/** Where the authorization server is mounted; the CORS rules and the OAuth adapter both need it. */
export const OAUTH_PREFIX = '/oauth';
