import type { ScreenshotOptions } from '@scrapejobs/contracts';
import type { Page } from 'puppeteer';

/** A larger image is not kept (docs/api.md §14). */
const MAX_SCREENSHOT_BYTES = 10 * 1024 * 1024;
/**
 * Chromium holds the whole bitmap of a capture in memory and puppeteer receives it as one base64
 * string, so a page is captured from its top-left corner up to these bounds, never beyond: at most
 * 16,384 px tall, 1,920 px wide (or the viewport's width when wider) and 800 × 16,384 pixels (a
 * 100,000 px page is cut, not refused).
 */
const MAX_SCREENSHOT_HEIGHT = 16_384;
const MAX_SCREENSHOT_WIDTH = 1_920;
const MAX_SCREENSHOT_PIXELS = 800 * MAX_SCREENSHOT_HEIGHT;

export interface Screenshot {
  /** The PNG, or null when none was asked for or it could not be kept. */
  screenshot: Buffer | null;
  /** Why a screenshot that was asked for is missing; null otherwise. */
  screenshotError: string | null;
}

/** A window laid out at the screenshot's viewport, before the page is loaded; nothing without one. */
export async function applyViewport(
  page: Page,
  options: ScreenshotOptions | null | undefined,
): Promise<void> {
  if (options?.viewport) await page.setViewport(options.viewport);
}

/**
 * The page as laid out now: the whole page (its full scroll size, within the bounds above), or only
 * the window when `full_page` is false; a PNG, or a JPEG of `quality`.
 */
export async function takeScreenshot(
  page: Page,
  options: ScreenshotOptions | null = null,
): Promise<Screenshot> {
  const window = page.viewport();
  const size = options?.full_page === false && window ? window : await contentSize(page);
  const maxWidth = Math.max(MAX_SCREENSHOT_WIDTH, options?.viewport?.width ?? 0);
  const clipWidth = Math.max(1, Math.min(size.width, maxWidth));
  const clipHeight = Math.max(
    1,
    Math.min(size.height, MAX_SCREENSHOT_HEIGHT, Math.floor(MAX_SCREENSHOT_PIXELS / clipWidth)),
  );
  const clip = { x: 0, y: 0, width: clipWidth, height: clipHeight };
  const image =
    options?.quality != null
      ? await page.screenshot({ type: 'jpeg', quality: options.quality, clip, captureBeyondViewport: true })
      : await page.screenshot({ type: 'png', clip, captureBeyondViewport: true });
  if (image.byteLength > MAX_SCREENSHOT_BYTES) {
    const mib = (image.byteLength / 1024 / 1024).toFixed(1);
    return {
      screenshot: null,
      screenshotError: `The screenshot is ${mib} MiB, more than the 10 MiB allowed.`,
    };
  }
  return { screenshot: Buffer.from(image.buffer, image.byteOffset, image.byteLength), screenshotError: null };
}

/** The page's scrollable size in CSS pixels, as Chromium lays it out (the page's scripts cannot fake it). */
async function contentSize(page: Page): Promise<{ width: number; height: number }> {
  const session = await page.createCDPSession();
  try {
    const { cssContentSize } = await session.send('Page.getLayoutMetrics');
    return { width: Math.ceil(cssContentSize.width), height: Math.ceil(cssContentSize.height) };
  } finally {
    await session.detach().catch(() => {});
  }
}
