import type { z } from 'zod';
import { ApiError, type FieldIssue } from '../domain/errors.js';

/** A zod failure on a query string as fields named by parameter: an unknown parameter is named itself, not `(body)`. */
export function queryIssues(err: z.ZodError): FieldIssue[] {
  return err.issues.flatMap((i) =>
    i.code === 'unrecognized_keys'
      ? i.keys.map((k) => ({ path: k, message: 'is not a query parameter of this route' }))
      : [{ path: i.path.length ? i.path.map(String).join('.') : '(query)', message: i.message }],
  );
}

/** The route's query parameters, or 400 INVALID_REQUEST "The query is invalid" naming each bad one. */
export function parseQuery<T extends z.ZodType>(schema: T, query: unknown): z.output<T> {
  const parsed = schema.safeParse(query);
  if (!parsed.success) throw ApiError.invalidQuery(queryIssues(parsed.error));
  return parsed.data;
}
