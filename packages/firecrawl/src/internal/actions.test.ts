import { parseScrapeRequest } from './scrape-request.ts';
import { detailsOf, parsedValue } from './testing.ts';

const scrape = (fields: Record<string, unknown>) =>
  parseScrapeRequest({ url: 'https://example.com/', ...fields }, 'v2');
const steps = (fields: Record<string, unknown>) => parsedValue(scrape(fields)).renderActions;

describe('actions and waitFor as render steps', () => {
  it('has no step without waitFor or actions', () => {
    expect(steps({})).toEqual([]);
  });

  it('waits waitFor milliseconds first, in steps of at most 10 s', () => {
    expect(steps({ waitFor: 2500 })).toEqual([{ type: 'wait', ms: 2500 }]);
    expect(steps({ waitFor: 25_000, timeout: 60_000 })).toEqual([
      { type: 'wait', ms: 10_000 },
      { type: 'wait', ms: 10_000 },
      { type: 'wait', ms: 5_000 },
    ]);
  });

  it('maps every supported action in order', () => {
    expect(
      steps({
        waitFor: 1000,
        actions: [
          { type: 'wait', milliseconds: 500 },
          { type: 'wait', selector: '#ready' },
          { type: 'click', selector: 'input[name=q]' },
          { type: 'write', text: 'firecrawl' },
          { type: 'press', key: 'Enter' },
          { type: 'scroll', direction: 'down' },
          { type: 'scroll', direction: 'up' },
          { type: 'scroll' },
          { type: 'screenshot', fullPage: true },
          { type: 'scrape' },
        ],
      }),
    ).toEqual([
      { type: 'wait', ms: 1000 },
      { type: 'wait', ms: 500 },
      { type: 'wait_for', selector: '#ready', timeout_ms: 10_000 },
      { type: 'click', selector: 'input[name=q]' },
      { type: 'type', selector: 'input[name=q]', text: 'firecrawl' },
      { type: 'press', key: 'Enter' },
      { type: 'scroll', to: 'bottom', times: 1 },
      { type: 'scroll', to: 'top', times: 1 },
      { type: 'scroll', to: 'bottom', times: 1 },
    ]);
  });

  it('types into the element of the latest click', () => {
    expect(
      steps({
        actions: [
          { type: 'click', selector: '#a' },
          { type: 'click', selector: '#b' },
          { type: 'write', text: 'x' },
        ],
      }).at(-1),
    ).toEqual({ type: 'type', selector: '#b', text: 'x' });
  });

  it('counts screenshot and scrape actions for the answer', () => {
    const request = parsedValue(
      scrape({
        actions: [
          { type: 'screenshot' },
          { type: 'wait', milliseconds: 10 },
          { type: 'scrape' },
          { type: 'scrape' },
        ],
      }),
    );
    expect(request.actionOutputs).toEqual({ screenshots: 1, scrapes: 2, scripts: 0 });
  });

  it('refuses a write with no click before it', () => {
    expect(detailsOf(scrape({ actions: [{ type: 'write', text: 'x' }] }))).toEqual({
      'actions[0]': 'a write action needs a click action before it, on the element to type into',
    });
  });

  it('refuses a click, write, press or scroll after a screenshot or scrape action', () => {
    expect(
      detailsOf(scrape({ actions: [{ type: 'screenshot' }, { type: 'click', selector: '#more' }] })),
    ).toEqual({
      'actions[0]':
        'the screenshot is taken after the last action here, so no click, write, press, scroll or executeJavascript may follow it',
    });
    expect(detailsOf(scrape({ actions: [{ type: 'scrape' }, { type: 'scroll' }] }))).toEqual({
      'actions[0]':
        'the page is captured after the last action here, so no click, write, press, scroll or executeJavascript may follow it',
    });
  });

  it.each(['pdf'])('refuses the %s action, naming it', (type) => {
    expect(
      detailsOf(
        scrape({
          actions: [
            { type: 'wait', milliseconds: 1 },
            { type, script: 'x' },
          ],
        }),
      ),
    ).toEqual({
      'actions[1].type': `the action "${type}" is not supported by this service`,
    });
  });

  it('refuses an action type Firecrawl does not have', () => {
    expect(detailsOf(scrape({ actions: [{ type: 'hover' }, {}] }))).toEqual({
      'actions[0].type':
        'must be one of wait, click, write, press, scroll, screenshot, scrape, executeJavascript',
      'actions[1].type':
        'must be one of wait, click, write, press, scroll, screenshot, scrape, executeJavascript',
    });
  });

  it('refuses what an action cannot do here, at its field', () => {
    expect(
      detailsOf(
        scrape({
          actions: [
            { type: 'screenshot', viewport: { width: 1, height: 100 } },
            { type: 'wait', milliseconds: 5, selector: '#x' },
            { type: 'click' },
            { type: 'executeJavascript', script: '' },
          ],
        }),
      ),
    ).toEqual({
      'actions[0].viewport.width': 'must be at least 100',
      'actions[1]': "Either 'milliseconds' or 'selector' must be provided, but not both.",
      'actions[2].selector': 'is required',
      'actions[3].script': 'must have at least 1 character',
    });
  });

  it('maps click with all, scroll of an element and executeJavascript to render steps, counting scripts', () => {
    const request = parsedValue(
      scrape({
        actions: [
          { type: 'click', selector: 'button.more', all: true },
          { type: 'scroll', direction: 'down', selector: '#list' },
          { type: 'executeJavascript', script: 'return document.title' },
          { type: 'scrape' },
        ],
      }),
    );
    expect(request.renderActions).toEqual([
      { type: 'click', selector: 'button.more', all: true },
      { type: 'scroll', to: 'bottom', times: 1, selector: '#list' },
      { type: 'execute_javascript', script: 'return document.title' },
    ]);
    expect(request.actionOutputs).toEqual({ screenshots: 0, scrapes: 1, scripts: 1 });
  });

  it('refuses more than 60 s of waiting, as Firecrawl does', () => {
    expect(
      detailsOf(
        scrape({
          waitFor: 20_000,
          timeout: 100_000,
          actions: [
            { type: 'wait', milliseconds: 40_000 },
            { type: 'wait', selector: '#x' },
          ],
        }),
      ),
    ).toEqual({ actions: 'Total wait time (waitFor + wait actions) cannot exceed 60 seconds' });
  });

  it('refuses a wait longer than the total wait limit at its path, before expanding it', () => {
    for (const milliseconds of [1e10, 1e12])
      expect(detailsOf(scrape({ actions: [{ type: 'wait', milliseconds }] }))).toEqual({
        'actions[0].milliseconds': 'must be at most 60000',
      });
  });

  it('refuses actions needing more than 20 render steps', () => {
    const actions = Array.from({ length: 21 }, () => ({ type: 'press', key: 'Tab' }));
    expect(detailsOf(scrape({ actions }))).toEqual({
      actions:
        'needs 21 render steps, more than the 20 this service runs (a wait takes one step per 10 seconds)',
    });
  });

  it('refuses waitFor over half the timeout, as Firecrawl does', () => {
    expect(detailsOf(scrape({ waitFor: 6000, timeout: 10_000 }))).toEqual({
      waitFor: 'waitFor must not exceed half of timeout',
    });
  });

  it('raises the default timeout to twice the waits', () => {
    expect(parsedValue(scrape({})).timeout).toBe(30_000);
    expect(
      parsedValue(scrape({ waitFor: 10_000, actions: [{ type: 'wait', milliseconds: 20_000 }] })).timeout,
    ).toBe(60_000);
  });
});
