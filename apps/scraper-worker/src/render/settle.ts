import type { Page } from 'puppeteer';

/**
 * A rendered page is read once its DOM has had no change for this long (docs/api.md §23): content
 * a script adds just after `load` (a fetch answered, a timer) is part of the page.
 */
export const QUIET_MS = 300;
/** The longest a page's DOM is waited on to settle; a page that never stops changing is read then. */
export const SETTLE_MAX_MS = 5_000;

/**
 * Resolves once the page's DOM has gone QUIET_MS without a node or text added, removed or changed
 * (attribute changes, such as animations, do not count), or after `maxMs` at the latest.
 */
export async function domSettled(page: Page, maxMs: number): Promise<void> {
  const limit = Math.max(0, Math.min(maxMs, SETTLE_MAX_MS));
  if (limit === 0) return;
  await page.evaluate(
    (quietMs, limitMs) =>
      new Promise<void>((resolve) => {
        const done = () => {
          observer.disconnect();
          clearTimeout(quiet);
          clearTimeout(cap);
          resolve();
        };
        const observer = new MutationObserver(() => {
          clearTimeout(quiet);
          quiet = setTimeout(done, quietMs);
        });
        let quiet = setTimeout(done, quietMs);
        const cap = setTimeout(done, limitMs);
        observer.observe(document, { subtree: true, childList: true, characterData: true });
      }),
    QUIET_MS,
    limit,
  );
}
