import type { Collection, Db } from 'mongodb';
import type { Adapter, AdapterPayload } from 'oidc-provider';
import { isDuplicateKey } from './mongo.js';

/**
 * oidc-provider state in MongoDB, one collection per model (`oauth_<model>`). FerretDB v1 has
 * no TTL indexes, so expiry is checked on every read and expired documents are swept now and then.
 * Registered clients expire too: OAUTH_UNUSED_CLIENT_TTL_HOURS after registration, or when their
 * last grant does, so registrations nobody uses (or only a throwaway sign-in did) go away.
 * The payload is stored as a JSON string: its keys (resource URLs in grants) contain dots,
 * which not every backend accepts as field names.
 */
interface OAuthStateDoc {
  _id: string;
  payload: string;
  expiresAt: Date | null;
  consumed: number | null;
  grantId: string | null;
  uid: string | null;
  userCode: string | null;
  /** Who and which client a grant is for (Grant documents only), so a borrower's grants are found and ended (borrower-grants.ts). */
  accountId?: string | null;
  clientId?: string | null;
}

const SWEEP_EVERY_MS = 10 * 60_000;

export function collectionName(model: string): string {
  return `oauth_${model.replace(/([a-z])([A-Z])/g, '$1_$2').toLowerCase()}`;
}

const indexed = new WeakMap<Db, Map<string, Promise<unknown>>>();

function ensureIndexes(db: Db, col: Collection<OAuthStateDoc>): Promise<unknown> {
  let perDb = indexed.get(db);
  if (!perDb) indexed.set(db, (perDb = new Map()));
  let pending = perDb.get(col.collectionName);
  if (!pending) {
    pending = Promise.all([
      col.createIndex({ grantId: 1 }),
      col.createIndex({ uid: 1 }),
      col.createIndex({ userCode: 1 }),
      ...(col.collectionName === collectionName('Grant') ? [col.createIndex({ accountId: 1 })] : []),
    ]);
    // A failed attempt is retried by the next write instead of being cached forever.
    pending.catch(() => perDb.delete(col.collectionName));
    perDb.set(col.collectionName, pending);
  }
  return pending;
}

class MongoAdapter implements Adapter {
  private lastSweep = 0;

  constructor(
    /** The store's current Db: it changes when a wedged client is replaced (store-watchdog.ts). */
    private readonly db: () => Db,
    private readonly model: string,
    private readonly nowMs: () => number,
    private readonly opts: AdapterOptions,
  ) {}

  private get col(): Collection<OAuthStateDoc> {
    return this.db().collection<OAuthStateDoc>(collectionName(this.model));
  }

  async upsert(id: string, payload: AdapterPayload, expiresIn?: number): Promise<void> {
    await ensureIndexes(this.db(), this.col);
    const now = this.nowMs();
    // A registered client lives a bounded time, extended by each grant (see clientUsed).
    const unusedClient = this.model === 'Client' && typeof expiresIn !== 'number';
    const doc: Omit<OAuthStateDoc, '_id'> = {
      payload: JSON.stringify(payload),
      expiresAt: typeof expiresIn === 'number' ? new Date(now + expiresIn * 1000) : unusedClient ? new Date(now + this.opts.unusedClientTtlMs) : null,
      consumed: typeof payload.consumed === 'number' ? payload.consumed : null,
      grantId: typeof payload.grantId === 'string' ? payload.grantId : null,
      uid: typeof payload.uid === 'string' ? payload.uid : null,
      userCode: typeof payload.userCode === 'string' ? payload.userCode : null,
      ...(this.model === 'Grant'
        ? { accountId: typeof payload.accountId === 'string' ? payload.accountId : null, clientId: typeof payload.clientId === 'string' ? payload.clientId : null }
        : {}),
    };
    try {
      await this.col.replaceOne({ _id: id }, doc, { upsert: true });
    } catch (err) {
      // A concurrent upsert of the same id inserted first; the document exists now, so replace it.
      if (!isDuplicateKey(err)) throw err;
      await this.col.replaceOne({ _id: id }, doc);
    }
    if (this.model === 'Grant' && typeof payload.clientId === 'string' && doc.expiresAt) await this.clientUsed(payload.clientId, doc.expiresAt);
    this.sweepSometimes(now);
  }

  find(id: string): Promise<AdapterPayload | undefined> {
    return this.findOne({ _id: id });
  }

  findByUid(uid: string): Promise<AdapterPayload | undefined> {
    return this.findOne({ uid });
  }

  findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
    return this.findOne({ userCode });
  }

  /**
   * A client is kept as long as a grant to it stands: its expiry moves out to the grant's when that
   * is later, never to "forever", so a throwaway sign-in keeps a junk registration no longer than
   * its grant. (Clients kept forever by the earlier rule, expiresAt null, stay so.)
   */
  private async clientUsed(clientId: string, grantExpiresAt: Date): Promise<void> {
    await this.db()
      .collection<OAuthStateDoc>(collectionName('Client'))
      .updateOne({ _id: clientId, expiresAt: { $ne: null, $lt: grantExpiresAt } }, { $set: { expiresAt: grantExpiresAt } });
  }

  async consume(id: string): Promise<void> {
    await this.col.updateOne({ _id: id }, { $set: { consumed: Math.floor(this.nowMs() / 1000) } });
  }

  async destroy(id: string): Promise<void> {
    await this.col.deleteOne({ _id: id });
  }

  async revokeByGrantId(grantId: string): Promise<void> {
    await this.col.deleteMany({ grantId });
  }

  private async findOne(filter: Partial<Pick<OAuthStateDoc, '_id' | 'uid' | 'userCode'>>): Promise<AdapterPayload | undefined> {
    const doc = await this.col.findOne(filter);
    if (!doc) return undefined;
    if (doc.expiresAt && doc.expiresAt.getTime() <= this.nowMs()) return undefined;
    const payload = JSON.parse(doc.payload) as AdapterPayload;
    return doc.consumed === null ? payload : { ...payload, consumed: doc.consumed };
  }

  /** Deletes expired state at most every few minutes per process and model; failures only delay it. */
  private sweepSometimes(now: number): void {
    if (now - this.lastSweep < SWEEP_EVERY_MS) return;
    this.lastSweep = now;
    this.col.deleteMany({ expiresAt: { $lt: new Date(now) } }).catch(() => undefined);
  }
}

export interface AdapterOptions {
  /** How long a registered client that nobody has granted anything is kept (unused DCR clients expire); a grant extends it to the grant's expiry. */
  unusedClientTtlMs: number;
}

/** The `adapter` option for oidc-provider: a factory oidc-provider calls once per model name. */
export function mongoAdapterFactory(db: () => Db, nowMs: () => number, opts: AdapterOptions): (model: string) => Adapter {
  return (model) => new MongoAdapter(db, model, nowMs, opts);
}
