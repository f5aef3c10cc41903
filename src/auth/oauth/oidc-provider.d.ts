/**
 * The slice of oidc-provider 9 (untyped JavaScript) this project uses. Configuration stays loose:
 * oidc-provider validates it at construction.
 */
declare module 'oidc-provider' {
  import type Koa from 'koa';
  import type { IncomingMessage, ServerResponse } from 'node:http';

  export type AdapterPayload = Record<string, unknown> & { grantId?: string; uid?: string; userCode?: string; consumed?: number };

  export interface Adapter {
    upsert(id: string, payload: AdapterPayload, expiresIn?: number): Promise<void>;
    find(id: string): Promise<AdapterPayload | undefined>;
    findByUserCode(userCode: string): Promise<AdapterPayload | undefined>;
    findByUid(uid: string): Promise<AdapterPayload | undefined>;
    consume(id: string): Promise<void>;
    destroy(id: string): Promise<void>;
    revokeByGrantId(grantId: string): Promise<void>;
  }

  export interface InteractionDetails {
    uid: string;
    returnTo: string;
    exp: number;
    params: Record<string, unknown>;
    prompt: { name: string; reasons: string[]; details: Record<string, unknown> };
    session?: { accountId?: string; uid?: string };
    grantId?: string;
  }

  export interface GrantInstance {
    jti: string;
    accountId?: string;
    clientId?: string;
    addOIDCScope(scope: string): void;
    addResourceScope(resource: string, scope: string): void;
    save(): Promise<string>;
  }

  export interface ClientInstance {
    clientId: string;
    clientName?: string;
    redirectUris: string[];
    clientAuthMethod: string;
    grantTypeAllowed(type: string): boolean;
  }

  export interface AccountInstance {
    accountId: string;
    claims(): Promise<Record<string, unknown>> | Record<string, unknown>;
  }

  export interface OIDCContext {
    route: string;
    params: Record<string, unknown>;
    entities: { Account?: AccountInstance; Client?: ClientInstance; [k: string]: unknown };
    client?: ClientInstance;
  }

  export type ProviderContext = Koa.Context & { oidc: OIDCContext };

  export class OIDCProviderError extends Error {
    status: number;
    statusCode: number;
    error: string;
    error_description?: string;
    expose: boolean;
  }

  type ErrorClass = new (description?: string) => OIDCProviderError;
  export const errors: {
    OIDCProviderError: typeof OIDCProviderError;
    InvalidTarget: ErrorClass;
    InvalidGrant: new (options?: { cause?: unknown }) => OIDCProviderError;
    InvalidRequest: ErrorClass;
    InvalidClientMetadata: ErrorClass;
    AccessDenied: ErrorClass;
    SessionNotFound: ErrorClass;
  };

  export default class Provider extends Koa {
    constructor(issuer: string, configuration?: Record<string, unknown>);
    readonly issuer: string;
    interactionDetails(req: IncomingMessage, res: ServerResponse): Promise<InteractionDetails>;
    interactionResult(
      req: IncomingMessage,
      res: ServerResponse,
      result: Record<string, unknown>,
      options?: { mergeWithLastSubmission?: boolean },
    ): Promise<string>;
    Grant: {
      new (props: { accountId: string; clientId: string }): GrantInstance;
      find(id: string): Promise<GrantInstance | undefined>;
    };
    Client: { find(id: string): Promise<ClientInstance | undefined> };
  }
}
