import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { issuesToDetails, unstorableText } from '@scrapejobs/contracts';
import { AppError, type Principal, type Scope, validationError } from '@scrapejobs/domain';
import { type NextFunction, type Request, type Response, Router } from 'express';
import type { z } from 'zod';
import { principalOf, requireScope } from './auth.ts';
import { jsonBody } from './body.ts';

export type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

export interface Reply {
  status: number;
  /** Sent as JSON; a `Readable` is streamed as it is (with backpressure), its type set in `headers`. */
  body?: unknown;
  headers?: Record<string, string>;
}

export interface HandlerInput<B, Q> {
  principal: Principal;
  params: Record<string, string>;
  body: B;
  query: Q;
}

/** One endpoint: the single description used for routing, validation and the OpenAPI document. */
export interface RouteDef<B = unknown, Q = unknown> {
  method: Method;
  /** OpenAPI form: `/jobs/{id}`. */
  path: string;
  summary: string;
  tag: string;
  scope: Scope;
  /** Schema of the JSON body, for the document and for parsing unless `parseBody` is given. */
  body?: z.ZodType<B>;
  /** Replaces the plain schema parse when a body needs checks beyond the schema. */
  parseBody?: (raw: unknown, principal: Principal) => B | Promise<B>;
  query?: z.ZodType<Q>;
  responses: Record<number, { description: string; schema?: z.ZodType }>;
  handler: (input: HandlerInput<B, Q>) => Promise<Reply>;
}

/** Keeps each route's body and query types tied to its handler. */
export const defineRoute = <B, Q>(def: RouteDef<B, Q>): RouteDef => def as RouteDef;

export function parseWith<T>(schema: z.ZodType<T>, raw: unknown, message = 'The request is invalid.'): T {
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw validationError(issuesToDetails(parsed.error.issues), message);
  return parsed.data;
}

const expressPath = (path: string) => path.replace(/\{(\w+)\}/g, ':$1');

/**
 * Mounts the routes, and answers 405 with `Allow` for a known path with another method.
 * Static paths go first, so `/jobs/status` is never read as the job id "status".
 */
export function mountRoutes(routes: readonly RouteDef[]): Router {
  const router = Router();
  const byPath = new Map<string, RouteDef[]>();
  for (const route of routes) byPath.set(route.path, [...(byPath.get(route.path) ?? []), route]);
  const paths = [...byPath.keys()].sort((a, b) => Number(a.includes('{')) - Number(b.includes('{')));
  for (const path of paths) {
    const group = byPath.get(path)!;
    for (const route of group) mountRoute(router, route);
    const allow = group
      .flatMap((r) => (r.method === 'get' ? ['GET', 'HEAD'] : [r.method.toUpperCase()]))
      .join(', ');
    router.all(expressPath(path), (_req: Request, res: Response, next: NextFunction) => {
      res.set('Allow', allow);
      next(new AppError(405, `Method not allowed; this path accepts ${allow}.`));
    });
  }
  return router;
}

function mountRoute(router: Router, route: RouteDef): void {
  // Any body sent must be JSON, even where the endpoint ignores it (docs/api.md §1).
  const steps = [
    requireScope(route.scope),
    ...(route.method === 'get' || route.method === 'delete' ? [] : [jsonBody]),
  ];
  router[route.method](expressPath(route.path), ...steps, async (req: Request, res: Response) => {
    rejectUnstorableText(req);
    const body = route.parseBody
      ? await route.parseBody(req.body, principalOf(req))
      : route.body
        ? parseWith(route.body, req.body)
        : undefined;
    const query = route.query ? parseWith(route.query, req.query, 'The query string is invalid.') : undefined;
    const reply = await route.handler({
      principal: principalOf(req),
      params: req.params as Record<string, string>,
      body,
      query,
    });
    if (reply.headers) res.set(reply.headers);
    if (reply.body instanceof Readable) await sendStream(req, res, reply.status, reply.body);
    else if (reply.body === undefined) res.status(reply.status).end();
    else res.status(reply.status).json(reply.body);
  });
}

/**
 * Every endpoint: a string or key that no column could store (NUL, a lone surrogate) is a 400
 * at its path before any schema or service sees it, so it never reaches the database.
 */
function rejectUnstorableText(req: Request): void {
  const details = { ...unstorableText(req.query), ...unstorableText(req.body) };
  if (Object.keys(details).length > 0)
    throw validationError(details, 'The request contains characters that cannot be stored.');
}

/**
 * Streams a body. A client that goes away destroys the body, which frees what it reads from;
 * a body that fails after the first byte can only cut the connection (the error handler does).
 */
async function sendStream(req: Request, res: Response, status: number, body: Readable): Promise<void> {
  res.status(status);
  if (req.method === 'HEAD') {
    body.destroy();
    res.end();
    return;
  }
  try {
    await pipeline(body, res);
  } catch (err) {
    if ((err as { code?: string }).code !== 'ERR_STREAM_PREMATURE_CLOSE') throw err;
  }
}
