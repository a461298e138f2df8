// render_config.screenshot: full-page PNGs of local pages, checked by their own header bytes.

import { inflateSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import type { RenderAction, ScreenshotOptions } from '@scrapejobs/contracts';
import { jpegSize } from '../../../../test/support/images.ts';
import { html, type LocalServer, startServer } from '../../../../test/support/render-servers.ts';
import { DEFAULT_CHROMIUM_PATH } from '../config.ts';
import { Renderer } from './index.ts';

const CHROMIUM = process.env.CHROMIUM_PATH ?? DEFAULT_CHROMIUM_PATH;
const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

interface PngHeader {
  width: number;
  height: number;
  colourType: number;
}

function pngHeader(png: Buffer): PngHeader {
  expect(png.subarray(0, 8)).toEqual(PNG_SIGNATURE);
  expect(png.toString('latin1', 12, 16)).toBe('IHDR');
  expect(png[24]).toBe(8); // bit depth
  return { width: png.readUInt32BE(16), height: png.readUInt32BE(20), colourType: png[25] ?? -1 };
}

/** The top-left pixel as `#rrggbb`: whatever a row's filter, its first pixel in row 0 is stored as is. */
function firstPixel(png: Buffer): string {
  const { colourType } = pngHeader(png);
  expect([2, 6]).toContain(colourType); // RGB or RGBA
  const parts: Buffer[] = [];
  for (let at = 8; at < png.length; ) {
    const length = png.readUInt32BE(at);
    if (png.toString('latin1', at + 4, at + 8) === 'IDAT') parts.push(png.subarray(at + 8, at + 8 + length));
    at += 12 + length;
  }
  const pixels = inflateSync(Buffer.concat(parts));
  return `#${pixels.subarray(1, 4).toString('hex')}`;
}

let server: LocalServer;
let renderer: Renderer;

beforeAll(async () => {
  server = await startServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const height = Number(url.searchParams.get('height') ?? 1_500);
    switch (url.pathname) {
      case '/blue': // a blue page exactly 1,500 px tall; a click turns it orange
        return void html(
          res,
          `<style>html, body { margin: 0; background: #3366cc; } #box { height: ${height}px; }</style>
          <div id="box"><button id="paint" onclick="document.body.style.background = '#ff8800'">paint</button></div>`,
        );
      case '/noise': // random pixels compress badly: a PNG far beyond 10 MiB
        return void html(
          res,
          `<style>html, body { margin: 0; } canvas { display: block; }</style><p id="text">noisy</p>
          <canvas id="c" width="800" height="8000"></canvas><script>
            const c = document.getElementById('c').getContext('2d');
            const image = c.createImageData(800, 8000);
            const bytes = new Uint32Array(image.data.buffer);
            let x = 2463534242;
            for (let i = 0; i < bytes.length; i++) { x ^= x << 13; x ^= x >>> 17; x ^= x << 5; bytes[i] = x | 0xff000000; }
            c.putImageData(image, 0, 0);
          </script>`,
        );
      default:
        return void html(res, 'not found', 404);
    }
  });
  renderer = await Renderer.start({ concurrency: 2, executablePath: CHROMIUM, allowPrivate: true });
});

afterAll(async () => {
  await renderer?.close();
  await server?.close();
});

const render = (
  path: string,
  screenshot: boolean,
  actions: RenderAction[] = [],
  screenshotOptions: ScreenshotOptions | null = null,
) =>
  renderer.render({
    url: `${server.origin}${path}`,
    waitStrategy: 'load',
    waitTimeoutMs: 10_000,
    screenshot,
    screenshotOptions,
    actions,
  });

describe('screenshots', () => {
  test('a screenshot is a PNG of the whole page: its width, its full height and its colour', async () => {
    const page = await render('/blue', true);
    expect(page.screenshotError).toBeNull();
    const png = page.screenshot as Buffer;
    expect(pngHeader(png)).toMatchObject({ width: 800, height: 1_500 });
    expect(firstPixel(png)).toBe('#3366cc');
  });

  test('the screenshot is taken after the actions', async () => {
    const page = await render('/blue', true, [{ type: 'click', selector: '#paint' }]);
    expect(firstPixel(page.screenshot as Buffer)).toBe('#ff8800');
  });

  test('a page taller than 16,384 px is captured down to 16,384 px only', async () => {
    const page = await render('/blue?height=100000', true);
    expect(pngHeader(page.screenshot as Buffer)).toMatchObject({ width: 800, height: 16_384 });
  });

  test('a PNG over 10 MiB is not kept, says why, and the HTML still comes back', async () => {
    const page = await render('/noise', true);
    expect(page.screenshot).toBeNull();
    expect(page.screenshotError).toMatch(/^The screenshot is [\d.]+ MiB, more than the 10 MiB allowed\.$/);
    expect(page.html).toContain('<p id="text">noisy</p>');
  });

  test('a viewport lays the page out at its width; the capture is the window alone, or the whole page with full_page', async () => {
    const viewport = { width: 1_200, height: 700 };
    const window = await render('/blue', true, [], { viewport, quality: null, full_page: false });
    expect(pngHeader(window.screenshot as Buffer)).toMatchObject({ width: 1_200, height: 700 });
    const whole = await render('/blue', true, [], { viewport, quality: null, full_page: true });
    expect(pngHeader(whole.screenshot as Buffer)).toMatchObject({ width: 1_200, height: 1_500 });
    // A page shorter than the window fills the window.
    const narrow = await render('/blue?height=300', true, [], {
      viewport: { width: 390, height: 844 },
      quality: null,
      full_page: true,
    });
    expect(pngHeader(narrow.screenshot as Buffer)).toMatchObject({ width: 390, height: 844 });
  });

  test('a quality makes a JPEG of the same size, smaller at a lower quality', async () => {
    const viewport = { width: 1_024, height: 600 };
    const high = await render('/noise', true, [], { viewport, quality: 90, full_page: false });
    const low = await render('/noise', true, [], { viewport, quality: 10, full_page: false });
    expect(jpegSize(high.screenshot as Buffer)).toEqual({ width: 1_024, height: 600 });
    expect(jpegSize(low.screenshot as Buffer)).toEqual({ width: 1_024, height: 600 });
    expect((low.screenshot as Buffer).length).toBeLessThan((high.screenshot as Buffer).length / 2);
    const fullPage = await render('/blue', true, [], { viewport: null, quality: 80, full_page: true });
    expect(jpegSize(fullPage.screenshot as Buffer)).toEqual({ width: 800, height: 1_500 });
  });

  test('no screenshot is taken when none is asked for', async () => {
    const page = await render('/blue', false);
    expect(page.screenshot).toBeNull();
    expect(page.screenshotError).toBeNull();
  });
});
