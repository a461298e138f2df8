import { MODEL_FORMATS, searchRequestSchema, searchResponseSchema } from '@scrapejobs/contracts';
import { validationError } from '@scrapejobs/domain';
import { NO_MODEL_MESSAGE } from '@scrapejobs/llm';
import { defineRoute, type RouteDef } from '../http/routes.ts';
import { runSearch, type SearchDeps } from './search.ts';

/** POST /search (docs/api.md §25): the operator's search engine, its results' pages scraped when formats are asked. */
export function searchRoutes(deps: SearchDeps, model: boolean): RouteDef[] {
  return [
    defineRoute({
      method: 'post',
      path: '/search',
      tag: 'Search',
      scope: 'jobs:write',
      summary:
        "Search the web through the operator's SearXNG; with formats, the results' pages are scraped as one batch",
      body: searchRequestSchema,
      responses: {
        200: {
          description: 'The results, each with its document when scraped.',
          schema: searchResponseSchema,
        },
        501: { description: 'No search engine is configured (SEARXNG_ENDPOINT).' },
        502: { description: 'The search engine failed.' },
        504: { description: 'The search engine did not answer within the timeout.' },
      },
      handler: async ({ principal, body }) => {
        if (!model) {
          const details: Record<string, string> = {};
          body.formats.forEach((format, i) => {
            if (MODEL_FORMATS.includes(format)) details[`formats[${i}]`] = NO_MODEL_MESSAGE;
          });
          if (Object.keys(details).length > 0) throw validationError(details);
        }
        const outcome = await runSearch(
          deps,
          principal,
          {
            query: body.query,
            limit: body.limit,
            lang: body.lang,
            country: body.country,
            tbs: body.tbs,
            timeoutMs: body.timeout,
          },
          body.formats.length > 0
            ? (urls) => ({
                name: `Search ${body.query}`.slice(0, 200),
                source: urls[0]!.replace(/[[\]{}]/g, (c) => `\\${c}`),
                queries: [],
                formats: body.formats,
                content: body.content,
                rate_limit: 6000,
                scheduling: null,
                render_config: null,
                proxy_config: null,
                crawl: {
                  follow: [{ type: 'css', query: 'a::attr(href)' }],
                  max_depth: 0,
                  max_pages: urls.length,
                  same_origin: false,
                  include: [],
                  exclude: [],
                  respect_robots_txt: true,
                  sitemap: false,
                },
                change_tracking: null,
                request: null,
                retention_days: null,
                refetch: 'always',
                extract: null,
              })
            : null,
        );
        const results = outcome.results.map((result) => {
          const page = outcome.scrape?.pages.get(result.url);
          return { ...result, document: page?.document ?? null, error: page?.error ?? null };
        });
        return {
          status: 200,
          body: { results, run_id: outcome.scrape?.run.run.id ?? null, warnings: outcome.warnings },
        };
      },
    }),
  ];
}
