/** A fetch answer read once: status, headers and the body as JSON (`{unparsable}` when it is not JSON). */
export interface JsonResponse {
  status: number;
  headers: Headers;
  json: any;
}

export async function readJsonResponse(res: Response): Promise<JsonResponse> {
  const text = await res.text();
  let json: unknown = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    json = { unparsable: text };
  }
  return { status: res.status, headers: res.headers, json };
}
