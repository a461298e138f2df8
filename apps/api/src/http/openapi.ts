import { errorBodySchema } from '@scrapejobs/contracts';
import { z } from 'zod';
import type { RouteDef } from './routes.ts';

const json = (schema: z.ZodType, io: 'input' | 'output') => ({
  'application/json': {
    schema: z.toJSONSchema(schema, { target: 'draft-2020-12', io, unrepresentable: 'any' }),
  },
});

const ERRORS: Record<number, string> = {
  400: 'Invalid request: `details` maps each field path to what is wrong.',
  401: 'Missing, malformed, unknown or revoked API key.',
  403: 'The API key lacks the scope this endpoint needs.',
  429: 'API rate limit exceeded; see Retry-After.',
  503: 'PostgreSQL or Redis is unreachable.',
};

/** The OpenAPI 3.1 document, generated from the same route table and zod schemas that serve requests. */
export function buildOpenApi(routes: readonly RouteDef[], version: string): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of routes) {
    const params = [...r.path.matchAll(/\{(\w+)\}/g)].map(([, name]) => ({
      name,
      in: 'path',
      required: true,
      schema: { type: 'string' },
    }));
    const query = r.query
      ? Object.entries(
          (z.toJSONSchema(r.query, { io: 'input', unrepresentable: 'any' }) as { properties?: object })
            .properties ?? {},
        ).map(([name, schema]) => ({ name, in: 'query', required: false, schema }))
      : [];
    const responses: Record<string, unknown> = {};
    for (const [status, res] of Object.entries(r.responses)) {
      responses[status] = {
        description: res.description,
        ...(res.schema && { content: json(res.schema, 'output') }),
      };
    }
    for (const [status, description] of Object.entries(ERRORS)) {
      responses[status] ??= { description, content: json(errorBodySchema, 'output') };
    }
    paths[r.path] ??= {};
    paths[r.path]![r.method] = {
      summary: r.summary,
      tags: [r.tag],
      security: [{ bearer: [] }],
      'x-scope': r.scope,
      parameters: [...params, ...query],
      ...((r.body || r.parseBody) && {
        requestBody: { required: true, content: json(r.body ?? z.unknown(), 'input') },
      }),
      responses,
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Scraping jobs API',
      version,
      description:
        'Create scraping jobs, run them, read and download their results, and receive signed webhooks.',
    },
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'sk_test_… or sk_live_…' } },
    },
    paths,
  };
}
