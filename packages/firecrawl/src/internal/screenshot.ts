import { SCREENSHOT_VIEWPORT, type ScreenshotOptions } from '@scrapejobs/contracts';
import { z } from 'zod';

/** A screenshot's `viewport` (format object or action): the window the page is laid out and captured in. */
export const viewportSchema = z.strictObject({
  width: z.int().min(SCREENSHOT_VIEWPORT.minWidth).max(SCREENSHOT_VIEWPORT.maxWidth),
  height: z.int().min(SCREENSHOT_VIEWPORT.minHeight).max(SCREENSHOT_VIEWPORT.maxHeight),
});

/** A screenshot's `quality`: a JPEG of that quality (Firecrawl takes any number from 1 to 100). */
export const qualitySchema = z.number().min(1).max(100);

/** A screenshot as a format or an action asked for it. */
export interface ScreenshotAsk {
  fullPage: boolean;
  quality?: number | undefined;
  viewport?: { width: number; height: number } | undefined;
}

/**
 * The job's screenshot options: the screenshot format's, else the first screenshot action's (a
 * page has one screenshot). Null when neither gives a viewport or a quality: a full-page PNG at
 * the renderer's window. A viewport without `fullPage` captures the window alone, as Firecrawl does.
 */
export function screenshotOptions(
  format: ScreenshotAsk | null,
  action: ScreenshotAsk | null,
): ScreenshotOptions | null {
  const ask = format ?? action;
  if (!ask || (ask.viewport === undefined && ask.quality === undefined)) return null;
  return {
    viewport: ask.viewport ?? null,
    quality: ask.quality === undefined ? null : Math.round(ask.quality),
    full_page: ask.viewport === undefined || ask.fullPage,
  };
}
