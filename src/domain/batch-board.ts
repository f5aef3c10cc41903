/**
 * A shard's board of its latest batches (the `batches-<shard>` document): their ids, newest last,
 * and beside them a version per batch that changes at every write of the batch's record (written
 * after the record), so a reader that read a record at version v need not read it again until the
 * board shows another version.
 */
export interface BatchBoard {
  batchIds: string[];
  /** Batch id to the version of its latest record write; only ids in batchIds. */
  versions: Record<string, string>;
}

export const ANNOUNCED_BATCHES = 32;

/**
 * A board document's batches and their versions. The versions count only if they were written
 * with the document's current revision: a worker older than versions rewrites the list and the
 * revision but leaves them, and the batches it then records would otherwise look unchanged.
 */
export function batchBoardOf(doc: { batchIds?: string[]; versions?: Record<string, string>; versionsRev?: string; rev?: string } | null | undefined): BatchBoard {
  const versioned = doc?.versions !== undefined && doc.versionsRev === doc.rev;
  return { batchIds: doc?.batchIds ?? [], versions: versioned ? { ...doc.versions } : {} };
}

/** A shard's latest batches with batchId added last (moved there if it was already in). */
export function withBatchAnnounced(batchIds: readonly string[], batchId: string, keep = ANNOUNCED_BATCHES): string[] {
  return [...batchIds.filter((id) => id !== batchId), batchId].slice(-keep);
}

/** The board after a write of batchId's record: the batch listed last at `version`; versions of ids no longer listed dropped. */
export function boardWithBatch(board: BatchBoard, batchId: string, version: string, keep = ANNOUNCED_BATCHES): BatchBoard {
  const batchIds = withBatchAnnounced(board.batchIds, batchId, keep);
  const versions: Record<string, string> = {};
  for (const id of batchIds) {
    const v = id === batchId ? version : board.versions[id];
    if (v !== undefined) versions[id] = v;
  }
  return { batchIds, versions };
}

/** What a reader keeps of a batch: whether its record is finished, and the board version it was read at (none: read without one). */
export interface KeptBatch {
  finished: boolean;
  version?: string;
  /** When it was read (the reader's clock). */
  atMs: number;
}

/**
 * The listed batches a reader reads again on taking in a board: those it does not hold, and those
 * unfinished whose board version is not the one it read them at. A finished batch never changes;
 * one the board gives no version (written by a worker older than versions) is left to ttlMs.
 */
export function batchesToRead(batchIds: readonly string[], versions: ReadonlyMap<string, string>, kept: (id: string) => KeptBatch | undefined): string[] {
  return batchIds.filter((id) => {
    const k = kept(id);
    if (!k) return true;
    if (k.finished) return false;
    const v = versions.get(id);
    return v !== undefined && v !== k.version;
  });
}

/** How long a reader may trust an unfinished batch's copy: ttlMs in any case, recheckMs at the version the board shows. */
export interface BatchTrust {
  ttlMs: number;
  recheckMs: number;
}

/**
 * Whether a reader may answer from its copy of a batch: finished; read less than ttlMs ago; or
 * read at the version the board shows now, less than recheckMs ago. The recheck bounds how late a
 * record written by a worker older than versions (which leaves the board alone) shows while both
 * releases run.
 */
export function keptBatchIsCurrent(k: KeptBatch, boardVersion: string | undefined, nowMs: number, trust: BatchTrust): boolean {
  if (k.finished) return true;
  const age = nowMs - k.atMs;
  if (age < trust.ttlMs) return true;
  return boardVersion !== undefined && k.version === boardVersion && age < trust.recheckMs;
}
