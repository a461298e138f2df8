import type { CDPSession, Page, Protocol } from 'puppeteer';

/** What a page's DOM never needs unless a screenshot is taken: images, fonts, audio and video. */
const MEDIA = new Set(['image', 'font', 'media']);
/**
 * What render_config.block_resources refuses besides (docs/api.md §23): style sheets, text tracks,
 * manifests, beacons and pings, prefetches; scripts, XHR, fetch and documents still load.
 */
const EXTRAS = new Set(['stylesheet', 'texttrack', 'manifest', 'ping', 'prefetch', 'cspviolationreport']);
/**
 * The request filter each kind is paused by. Chromium's filter knows no text track, manifest or
 * prefetch ("Unknown resource type in fetch filter"): those are looked for among the requests of
 * no other kind and among media, and what is paused but not refused goes on.
 */
const FILTER: Record<string, Protocol.Network.ResourceType> = {
  image: 'Image',
  font: 'Font',
  media: 'Media',
  stylesheet: 'Stylesheet',
  texttrack: 'Media',
  manifest: 'Other',
  ping: 'Ping',
  prefetch: 'Other',
  cspviolationreport: 'CSPViolationReport',
};
/**
 * Every request handler of a page resolves at this priority (puppeteer's cooperative interception):
 * a refusal wins over a continue, and a continue keeps the overrides another handler set.
 */
export const INTERCEPT_PRIORITY = 0;

export interface Refusal {
  keepMedia: boolean;
  extras: boolean;
}

/** The kinds of request refused, by puppeteer's names. */
function refusedTypes(opts: Refusal): Set<string> {
  return new Set([...(opts.keepMedia ? [] : MEDIA), ...(opts.extras ? EXTRAS : [])]);
}

/** Pages whose requests of some kinds are refused by their own protocol session, and which kinds. */
const refusing = new WeakMap<Page, { session: CDPSession; types: string }>();

/**
 * Refuses the page's requests for media unless `keepMedia`, and for the extras when `extras`:
 * less downloaded and decoded per rendered page. Does nothing when nothing is refused.
 *
 * With puppeteer's request interception on (`intercepting`: the job's headers are added to each
 * request), the refusal is one more handler of it. Otherwise only the requests refused are paused,
 * by their kind, on a protocol session of the page's own: the document, its scripts and whatever
 * else it loads go on without a round trip to the worker (set once for a page kept between renders).
 */
export async function refuseResources(page: Page, opts: Refusal, intercepting: boolean): Promise<void> {
  const types = refusedTypes(opts);
  if (intercepting) {
    if (types.size === 0) return;
    page.on('request', (request) => {
      const resolved = types.has(request.resourceType())
        ? request.abort('blockedbyclient', INTERCEPT_PRIORITY)
        : request.continue(request.continueRequestOverrides(), INTERCEPT_PRIORITY);
      // A request the page already cancelled cannot be resolved; nothing to do then.
      void resolved.catch(() => {});
    });
    return;
  }
  const wanted = [...types].sort().join(',');
  const current = refusing.get(page);
  if ((current?.types ?? '') === wanted) return;
  const session = current?.session ?? (await page.createCDPSession());
  if (!current) {
    session.on('Fetch.requestPaused', (event: Protocol.Fetch.RequestPausedEvent) => {
      // A request the page already cancelled cannot be failed; nothing to do then.
      void session
        .send('Fetch.failRequest', { requestId: event.requestId, errorReason: 'BlockedByClient' })
        .catch(() => {});
    });
  }
  refusing.set(page, { session, types: wanted });
  if (types.size === 0) await session.send('Fetch.disable');
  else
    await session.send('Fetch.enable', {
      patterns: [...new Set([...types].map((type) => FILTER[type]))].map((resourceType) => ({
        resourceType,
        requestStage: 'Request' as const,
      })),
    });
}
