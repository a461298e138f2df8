import type { Logger } from '@scrapejobs/logging';
import { FetchError, type RequestPace } from '../fetch/index.ts';
import type { LoadedPage, RenderNote, RunFetching } from './page-loader.ts';
import type { RenderLearning } from './render-learning.ts';

/**
 * A page of an `auto` job as first got: fetched plainly, to be checked after its extraction
 * (`check`), or rendered directly because its host's pages need it (`check` null).
 */
export interface FirstLoad {
  page: LoadedPage;
  render: RenderNote;
  check: 'rules' | 'full' | null;
}

/**
 * `render_config.mode: auto` (docs/api.md §23) for one run's work here: pages are fetched plainly
 * and rendered when they need it, or rendered directly once their host's pages have needed it, as
 * every worker learns together. A render that fails (the browser crashed, Chromium did not start,
 * the rendered page answered an error) leaves the plain page: a URL that can be fetched is not
 * failed by its render.
 */
export class AutoRendering {
  readonly #learning: RenderLearning;
  readonly #fetching: RunFetching;
  readonly #jobId: string;
  readonly #log: Logger;

  constructor(learning: RenderLearning, fetching: RunFetching, jobId: string, log: Logger) {
    this.#learning = learning;
    this.#fetching = fetching;
    this.#jobId = jobId;
    this.#log = log;
  }

  async load(url: string, signal: AbortSignal, pace: RequestPace): Promise<FirstLoad> {
    const host = new URL(url).host;
    const plan = await this.#learning.plan(this.#jobId, host).catch((err: Error) => {
      this.#log.warn(
        { url, err: err.message },
        'could not read what auto rendering learned; the page is checked',
      );
      return 'check' as const;
    });
    if (plan === 'render') {
      const page = await this.render(url, signal, pace);
      if (page) return { page, render: { rendered: true, reason: 'host_learned' }, check: null };
      const plain = await (await this.#fetching.pageLoader())(url, signal, pace);
      return { page: plain, render: { rendered: false, reason: 'render_failed' }, check: null };
    }
    const page = await (await this.#fetching.pageLoader())(url, signal, pace);
    return {
      page,
      render: { rendered: false, reason: 'static' },
      check: plan === 'plain' ? 'rules' : 'full',
    };
  }

  /** The page rendered; null when the render failed for a reason a plain fetch does not share. */
  async render(url: string, signal: AbortSignal, pace: RequestPace): Promise<LoadedPage | null> {
    try {
      return await (await this.#fetching.renderLoader())(url, signal, pace);
    } catch (err) {
      if (signal.aborted || !renderFailure(err)) throw err;
      this.#log.warn({ url, err: (err as Error).message }, 'render failed; the page is taken as fetched');
      return null;
    }
  }

  /** Notes whether a page that was checked plainly needed rendering. */
  note(url: string, needed: boolean): void {
    this.#learning.note(this.#jobId, new URL(url).host, needed).catch((err: Error) => {
      this.#log.warn({ url, err: err.message }, 'could not note what auto rendering learned');
    });
  }
}

/** A failure of the render itself, not of anything before it (the run's pace, its cancellation). */
function renderFailure(err: unknown): boolean {
  return (err as Error).name === 'RenderError' || err instanceof FetchError;
}
