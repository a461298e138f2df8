import { counter, Gauge, histogram, type Registry } from '@scrapejobs/observability';

/** The scraper worker's metrics on `registry`; `browser` reads the browser pool when it runs. */
export function scraperMetrics(
  registry: Registry,
  browser: () => { busy: number; concurrency: number } | undefined,
) {
  new Gauge({
    name: 'scraper_browser_pages',
    help: 'Browser pool: pages rendering now (busy) and the pool size (capacity); 0 before the first render.',
    labelNames: ['kind'] as const,
    registers: [registry],
    collect() {
      const stats = browser();
      this.set({ kind: 'busy' }, stats?.busy ?? 0);
      this.set({ kind: 'capacity' }, stats?.concurrency ?? 0);
    },
  });
  return {
    pages: counter(
      registry,
      'scraper_pages_total',
      'Pages fetched or rendered, by outcome (success or an error code).',
      ['outcome'],
    ),
    runDuration: histogram(
      registry,
      'scraper_run_duration_seconds',
      'Duration of runs from trigger to end, by final status.',
      [1, 5, 15, 60, 300, 900, 1800, 3600],
      ['status'],
    ),
    retentionRows: counter(
      registry,
      'retention_deleted_rows_total',
      'Rows deleted by the retention sweep (docs/api.md §15), by table.',
      ['table'],
    ),
    retentionBytes: counter(
      registry,
      'retention_deleted_bytes_total',
      'Bytes of the rows deleted by the retention sweep (as stored, pg_column_size), by table.',
      ['table'],
    ),
    modelCalls: counter(registry, 'scraper_model_calls_total', "Calls to the operator's language model."),
    modelTokens: counter(
      registry,
      'scraper_model_tokens_total',
      "Tokens (input and output) the operator's language model reported, or estimated when it reports none.",
    ),
    extractionThreadEnds: counter(
      registry,
      'scraper_extraction_threads_ended_total',
      'Extraction threads ended by the worker, by limit (time, memory) or crash.',
      ['limit'],
    ),
  };
}
