import type { Express } from 'express';
import request from 'supertest';

/** supertest bound to one bearer token. */
export function client(app: Express, token: string) {
  const auth = (t: request.Test) => t.set('Authorization', `Bearer ${token}`);
  return {
    get: (path: string) => auth(request(app).get(path)),
    post: (path: string, body?: unknown) => {
      const t = auth(request(app).post(path));
      return body === undefined ? t : t.send(body as object);
    },
    put: (path: string, body: unknown) => auth(request(app).put(path)).send(body as object),
    patch: (path: string, body: unknown) => auth(request(app).patch(path)).send(body as object),
    delete: (path: string) => auth(request(app).delete(path)),
  };
}

export type Client = ReturnType<typeof client>;

export const validJob = (over: Record<string, unknown> = {}) => ({
  name: 'Example',
  source: 'https://example.com/items',
  queries: [{ name: 'title', type: 'css', query: 'h1' }],
  ...over,
});
