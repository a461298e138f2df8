import { cookieHeader, type OutgoingCookie, type OutgoingRequest, outgoingHeaders } from './outgoing.ts';

const cookie = (over: Partial<OutgoingCookie>): OutgoingCookie => ({
  name: 'sid',
  value: 'v',
  domain: 'shop.example',
  hostOnly: false,
  path: '/',
  ...over,
});

describe('cookieHeader', () => {
  it('matches domains and their subdomains, host-only cookies on their host alone', () => {
    const cookies = [
      cookie({ name: 'a' }),
      cookie({ name: 'b', domain: 'www.shop.example', hostOnly: true }),
    ];
    expect(cookieHeader(new URL('https://shop.example/'), cookies)).toBe('a=v');
    expect(cookieHeader(new URL('https://www.shop.example/'), cookies)).toBe('a=v; b=v');
    expect(cookieHeader(new URL('https://api.www.shop.example/'), cookies)).toBe('a=v');
    expect(cookieHeader(new URL('https://evilshop.example/'), cookies)).toBeNull();
    expect(cookieHeader(new URL('https://shop.example.evil/'), cookies)).toBeNull();
  });

  it('matches paths at segment boundaries, longer paths first', () => {
    const cookies = [cookie({ name: 'root' }), cookie({ name: 'acct', path: '/account' })];
    expect(cookieHeader(new URL('https://shop.example/account/orders'), cookies)).toBe('acct=v; root=v');
    expect(cookieHeader(new URL('https://shop.example/account'), cookies)).toBe('acct=v; root=v');
    expect(cookieHeader(new URL('https://shop.example/accounts'), cookies)).toBe('root=v');
  });
});

describe('outgoingHeaders', () => {
  const req: OutgoingRequest = {
    headers: { 'X-Api-Key': 'k' },
    cookies: [cookie({ domain: 'shop.example', hostOnly: true })],
    basicAuth: { username: 'u', password: 'p:w' },
    authOrigins: ['https://shop.example'],
    userAgent: null,
  };

  it('sends everything to the origin asked for', () => {
    expect(outgoingHeaders(req, new URL('https://shop.example/a'), 'https://shop.example')).toEqual({
      'X-Api-Key': 'k',
      cookie: 'sid=v',
      authorization: `Basic ${Buffer.from('u:p:w').toString('base64')}`,
    });
  });

  it('sends neither headers, cookies nor credentials to another origin after a redirect', () => {
    expect(outgoingHeaders(req, new URL('https://cdn.example/a'), 'https://shop.example')).toEqual({});
    // Another scheme is another origin too, even where the cookie's domain matches.
    expect(outgoingHeaders(req, new URL('http://shop.example/a'), 'https://shop.example')).toEqual({});
  });

  it('sends basic auth only to the source origins, even for a page asked for on another', () => {
    expect(outgoingHeaders(req, new URL('https://other.example/'), 'https://other.example')).toEqual({
      'X-Api-Key': 'k',
    });
  });

  it('sends an authorization of any scheme as given, only to the source origins', () => {
    const bearer = { ...req, basicAuth: null, authorization: 'Bearer t0k' };
    expect(outgoingHeaders(bearer, new URL('https://shop.example/a'), 'https://shop.example')).toMatchObject({
      authorization: 'Bearer t0k',
    });
    expect(outgoingHeaders(bearer, new URL('https://other.example/'), 'https://other.example')).toEqual({
      'X-Api-Key': 'k',
    });
  });
});
