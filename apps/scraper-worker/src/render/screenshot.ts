import type { Page } from 'puppeteer';

/** A larger PNG is not kept (docs/api.md §14). */
const MAX_SCREENSHOT_BYTES = 10 * 1024 * 1024;
/**
 * Chromium holds the whole bitmap of a capture in memory and puppeteer receives it as one base64
 * string, so a page is captured from its top-left corner up to these bounds, never beyond: at most
 * 16,384 px tall, 1,920 px wide and 800 × 16,384 pixels (a 100,000 px page is cut, not refused).
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

/** A PNG of the whole page as laid out now (its full scroll size, within the bounds above). */
export async function fullPageScreenshot(page: Page): Promise<Screenshot> {
  const { width, height } = await contentSize(page);
  const clipWidth = Math.max(1, Math.min(width, MAX_SCREENSHOT_WIDTH));
  const clipHeight = Math.max(
    1,
    Math.min(height, MAX_SCREENSHOT_HEIGHT, Math.floor(MAX_SCREENSHOT_PIXELS / clipWidth)),
  );
  const png = await page.screenshot({
    type: 'png',
    clip: { x: 0, y: 0, width: clipWidth, height: clipHeight },
    captureBeyondViewport: true,
  });
  if (png.byteLength > MAX_SCREENSHOT_BYTES) {
    const mib = (png.byteLength / 1024 / 1024).toFixed(1);
    return {
      screenshot: null,
      screenshotError: `The screenshot is ${mib} MiB, more than the 10 MiB allowed.`,
    };
  }
  return { screenshot: Buffer.from(png.buffer, png.byteOffset, png.byteLength), screenshotError: null };
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
