import { Jobs } from './jobs.ts';
import { Results } from './results.ts';
import { Runs } from './runs.ts';
import { type ClientOptions, Transport } from './transport.ts';
import { Webhooks } from './webhooks.ts';

/** The scraping jobs API, one property per resource. */
export class ScrapeJobs {
  readonly jobs: Jobs;
  readonly runs: Runs;
  readonly results: Results;
  readonly webhooks: Webhooks;
  readonly baseUrl: string;

  constructor(options: ClientOptions) {
    const transport = new Transport(options);
    this.baseUrl = transport.baseUrl;
    this.jobs = new Jobs(transport);
    this.runs = new Runs(transport);
    this.results = new Results(transport);
    this.webhooks = new Webhooks(transport);
  }
}
