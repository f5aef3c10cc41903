/** Where the authorization server is mounted; the CORS rules and the OAuth adapter both need it. */
export const OAUTH_PREFIX = '/oauth';

/** Where the merchant facilitator API is mounted; its router and the capture admission in front of Koa both need it. */
export const FACILITATOR_PREFIX = '/api/v1/facilitator';
