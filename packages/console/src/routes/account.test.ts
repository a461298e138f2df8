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
const rotate = () =>
  request(f.app)
    .post('/console/account/firecrawl-webhook-secret')
    .set('Cookie', f.session.cookie)
    .type('form')
    .send({ _csrf: f.session.csrf });
const shown = (html: string) => /id="new-firecrawl-secret"[^>]*>(fcwhsec_[\w-]+)</.exec(html)?.[1];
const stored = async () => {
  const row = await f.tdb.db.firecrawlWebhookSecret.findUniqueOrThrow({
    where: { userId: f.session.userId },
  });
  return openFirecrawlSecret(new SecretBox(DEVELOPMENT_SECRET_KEY), row.secretEncrypted, f.session.userId);
};

describe('the account page’s Firecrawl webhook secret', () => {
  it('says deliveries are unsigned while there is no secret', async () => {
    const page = await get('/account');
    expect(page.status).toBe(200);
    expect(page.text).toContain('Firecrawl webhook secret');
    expect(page.text).toContain('No secret yet: deliveries go out unsigned.');
    expect(page.text).toContain('Create secret');
    expect(shown(page.text)).toBeUndefined();
  });

  it('shows a new secret once, sealed as the one stored, and a rotation replaces it', async () => {
    const made = await rotate();
    expect([made.status, made.headers.location]).toEqual([303, '/console/account']);
    const once = await get('/account');
    const first = shown(once.text);
    expect(first).toMatch(/^fcwhsec_[\w-]{43}$/);
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

  it('refuses a rotation without the session’s form token', async () => {
    const before = await stored();
    const forged = await request(f.app)
      .post('/console/account/firecrawl-webhook-secret')
      .set('Cookie', f.session.cookie)
      .type('form')
      .send({ _csrf: 'forged' });
    expect(forged.status).toBe(403);
    expect(await stored()).toBe(before);
  });
});
