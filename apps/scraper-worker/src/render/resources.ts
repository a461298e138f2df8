import type { Page } from 'puppeteer';

/** What a page's DOM never needs unless a screenshot is taken: images, fonts, audio and video. */
const MEDIA = new Set(['image', 'font', 'media']);
/**
 * What render_config.block_resources refuses besides (docs/api.md §23): style sheets, text tracks,
 * manifests, beacons and pings, prefetches; scripts, XHR, fetch and documents still load.
 */
const EXTRAS = new Set(['stylesheet', 'texttrack', 'manifest', 'ping', 'prefetch', 'cspviolationreport']);
/**
 * Every request handler of a page resolves at this priority (puppeteer's cooperative interception):
 * a refusal wins over a continue, and a continue keeps the overrides another handler set.
 */
export const INTERCEPT_PRIORITY = 0;

/**
 * Refuses the page's requests for media unless `keepMedia`, and for the extras when `extras`:
 * less downloaded and decoded per rendered page. Does nothing (no interception) when nothing is refused.
 */
export async function refuseResources(
  page: Page,
  opts: { keepMedia: boolean; extras: boolean },
): Promise<void> {
  if (opts.keepMedia && !opts.extras) return;
  await page.setRequestInterception(true);
  page.on('request', (request) => {
    const type = request.resourceType();
    const refused = (!opts.keepMedia && MEDIA.has(type)) || (opts.extras && EXTRAS.has(type));
    const resolved = refused
      ? request.abort('blockedbyclient', INTERCEPT_PRIORITY)
      : request.continue(request.continueRequestOverrides(), INTERCEPT_PRIORITY);
    // A request the page already cancelled cannot be resolved; nothing to do then.
    void resolved.catch(() => {});
  });
}
