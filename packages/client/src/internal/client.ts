import { Jobs } from './jobs.ts';
import { Results } from './results.ts';
import { Runs } from './runs.ts';
import { type ClientOptions, Transport } from './transport.ts';
import type { SearchRequest, SearchResponse } from './types.ts';
import { Webhooks } from './webhooks.ts';

/** The scraping jobs API, one property per resource. */
export class ScrapeJobs {
  readonly jobs: Jobs;
  readonly runs: Runs;
  readonly results: Results;
  readonly webhooks: Webhooks;
  readonly baseUrl: string;
  readonly #transport: Transport;

  constructor(options: ClientOptions) {
    const transport = new Transport(options);
    this.#transport = transport;
    this.baseUrl = transport.baseUrl;
    this.jobs = new Jobs(transport);
    this.runs = new Runs(transport);
    this.results = new Results(transport);
    this.webhooks = new Webhooks(transport);
  }

  /** POST /search: the operator's search engine; with `formats`, each result's page scraped (docs/api.md §25). */
  search(body: SearchRequest): Promise<SearchResponse> {
    return this.#transport.json('POST', '/search', { body });
  }
}
