import { openFirecrawlSecret } from '@scrapejobs/domain';
import { DEVELOPMENT_SECRET_KEY, SecretBox } from '@scrapejobs/outbound';
import request from 'supertest';
import { type ConsoleFixture, consoleFixture } from '../testing.ts';

// The account page's Firecrawl webhook secret (docs/api.md §18) over the real webhooks service.
let f: ConsoleFixture;

beforeAll(async () => {
  f = await consoleFixture('account@example.com');
});
afterAll(() => f.close());

const get = (path: string) => request(f.app).get(`/console${path}`).set('Cookie', f.session.cookie);
const post = (path: string, csrf = f.session.csrf) =>
  request(f.app).post(`/console${path}`).set('Cookie', f.session.cookie).type('form').send({ _csrf: csrf });
const rotate = () => post('/account/firecrawl-webhook-secret');
const show = () => post('/account/firecrawl-webhook-secret/show');
const shown = (html: string) => /id="new-firecrawl-secret"[^>]*>(fcwhsec_[\w-]+)</.exec(html)?.[1];
const stored = async () => {
  const row = await f.tdb.db.firecrawlWebhookSecret.findUniqueOrThrow({
    where: { userId: f.session.userId },
  });
  return openFirecrawlSecret(new SecretBox(DEVELOPMENT_SECRET_KEY), row.secretEncrypted, f.session.userId);
};

describe('the account page’s Firecrawl webhook secret', () => {
  it('has a secret from the first visit, sealed as stored, shown on request on the next page only', async () => {
    expect(await f.tdb.db.firecrawlWebhookSecret.count({ where: { userId: f.session.userId } })).toBe(0);
    const page = await get('/account');
    expect(page.status).toBe(200);
    expect(page.text).toContain('Firecrawl webhook secret');
    expect(page.text).toContain('A secret is set');
    expect(page.text).toContain('Show secret');
    expect(shown(page.text)).toBeUndefined();
    const made = await stored();
    expect(made).toMatch(/^fcwhsec_[\w-]{43}$/);
    const asked = await show();
    expect([asked.status, asked.headers.location]).toEqual([303, '/console/account']);
    const once = await get('/account');
    expect(shown(once.text)).toBe(made);
    expect(once.text).not.toContain('no longer signs');
    expect(shown((await get('/account')).text)).toBeUndefined();
    // Showing changes nothing.
    expect(await stored()).toBe(made);
  });

  it('shows a rotated secret once, sealed as the one stored, replacing the one before', async () => {
    const before = await stored();
    const made = await rotate();
    expect([made.status, made.headers.location]).toEqual([303, '/console/account']);
    const once = await get('/account');
    const first = shown(once.text);
    expect(first).toMatch(/^fcwhsec_[\w-]{43}$/);
    expect(first).not.toBe(before);
    expect(once.text).toContain('Any previous secret no longer signs deliveries.');
    expect(await stored()).toBe(first);
    const again = await get('/account');
    expect(shown(again.text)).toBeUndefined();
    expect(again.text).toContain('A secret is set');
    expect(again.text).toContain('Rotate secret');

    await rotate();
    const second = shown((await get('/account')).text);
    expect(second).toMatch(/^fcwhsec_/);
    expect(second).not.toBe(first);
    expect(await stored()).toBe(second);
  });

  it('refuses a rotation or a showing without the session’s form token', async () => {
    const before = await stored();
    expect((await post('/account/firecrawl-webhook-secret', 'forged')).status).toBe(403);
    expect((await post('/account/firecrawl-webhook-secret/show', 'forged')).status).toBe(403);
    expect(await stored()).toBe(before);
    expect(shown((await get('/account')).text)).toBeUndefined();
  });
});
