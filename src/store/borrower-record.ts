import type { BorrowerDoc, StoredBorrowerDoc } from './documents.js';

/**
 * How a borrower's open holds are stored. FerretDB v1 keeps a type entry for every field of a
 * document and rewrites the whole document on any update, so a map of one key per open hold made
 * every borrower read and write cost O(open holds) in the store: a settled batch's borrower writes
 * took 2.8x as long with 240 open holds each as with the same holds in one text field. The holds
 * are one JSON text, `holdsJson`; the code sees the map (`BorrowerDoc.holds`) and only this module
 * knows the stored form.
 */

/** The borrower as the code sees it. A document written before holdsJson keeps its map in `holds`. */
export function borrowerFromStored(stored: StoredBorrowerDoc): BorrowerDoc {
  const { holdsJson, holds, ...rest } = stored;
  return { ...rest, holds: holdsJson === undefined ? { ...(holds ?? {}) } : parseHolds(holdsJson, stored._id) };
}

/** The document to insert for a new borrower. */
export function storedBorrower(doc: BorrowerDoc): StoredBorrowerDoc {
  const { holds, ...rest } = doc;
  return { ...rest, holdsJson: JSON.stringify(holds) };
}

/** The update operators that write `change` (its holds as holdsJson, dropping an older document's map). */
export function storedChange(change: Partial<Pick<BorrowerDoc, 'holds'>> & Record<string, unknown>): { $set: Record<string, unknown>; $unset?: { holds: '' } } {
  const { holds, ...rest } = change;
  if (holds === undefined) return { $set: rest };
  return { $set: { ...rest, holdsJson: JSON.stringify(holds) }, $unset: { holds: '' } };
}

function parseHolds(text: string, borrowerId: string): Record<string, number> {
  const parsed: unknown = JSON.parse(text);
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed) || Object.values(parsed).some((v) => typeof v !== 'number')) {
    throw new Error(`borrower ${borrowerId} has holdsJson that is not a map of amounts`);
  }
  return parsed as Record<string, number>;
}
