import { MOBILE_USER_AGENT } from './fetch-settings.ts';
import { parseScrapeRequest } from './scrape-request.ts';
import { detailsOf, parsedValue } from './testing.ts';
import type { FirecrawlVersion } from './types.ts';

const scrape = (fields: Record<string, unknown>, version: FirecrawlVersion = 'v2') =>
  parseScrapeRequest({ url: 'https://example.com/', ...fields }, version);
const fetchOf = (fields: Record<string, unknown>, version: FirecrawlVersion = 'v2') =>
  parsedValue(scrape(fields, version)).fetch;

const basic = (credentials: string) => `Basic ${Buffer.from(credentials).toString('base64')}`;

describe('headers, mobile and location', () => {
  it('fetches with nothing added when none is given', () => {
    expect(fetchOf({})).toEqual({
      headers: {},
      cookies: [],
      basicAuth: null,
      authorization: null,
      userAgent: null,
      country: null,
      skipTlsVerification: false,
    });
  });

  it('keeps ordinary headers as the job’s headers', () => {
    expect(fetchOf({ headers: { 'X-Api': 'k', Referer: 'https://a.example/' } }).headers).toEqual({
      'X-Api': 'k',
      Referer: 'https://a.example/',
    });
  });

  it('turns a Cookie header into cookies for the page’s host', () => {
    expect(fetchOf({ headers: { cookie: 'session=abc; theme=dark ;flag' } }).cookies).toEqual([
      { name: 'session', value: 'abc', domain: null, path: '/' },
      { name: 'theme', value: 'dark', domain: null, path: '/' },
      { name: 'flag', value: '', domain: null, path: '/' },
    ]);
  });

  it('turns Authorization: Basic into the basic credentials', () => {
    expect(fetchOf({ headers: { Authorization: basic('ann:s3:cret') } }).basicAuth).toEqual({
      username: 'ann',
      password: 's3:cret',
    });
  });

  it('takes an Authorization of any scheme as the job’s authorization, and Basic credentials as basic_auth', () => {
    const fetchOf = (value: string) => parsedValue(scrape({ headers: { Authorization: value } })).fetch;
    expect(fetchOf('Bearer abc.def')).toMatchObject({ authorization: 'Bearer abc.def', basicAuth: null });
    expect(fetchOf('Token t0k3n')).toMatchObject({ authorization: 'Token t0k3n', basicAuth: null });
    // Basic that is not base64 of user:password is sent as given too.
    expect(fetchOf('Basic bm9jb2xvbg==')).toMatchObject({
      authorization: 'Basic bm9jb2xvbg==',
      basicAuth: null,
    });
    expect(fetchOf('Basic dXNlcjpwYXNz')).toMatchObject({
      authorization: null,
      basicAuth: { username: 'user', password: 'pass' },
    });
    expect(detailsOf(scrape({ headers: { Authorization: 'Bearer \u2603' } }))).toEqual({
      'headers.Authorization': expect.stringContaining('printable'),
    });
  });

  it('refuses a Cookie header the job cannot hold', () => {
    expect(detailsOf(scrape({ headers: { Cookie: 'bad name=1' } }))).toEqual({
      'headers.Cookie': 'is not a valid Cookie header: 0.name: must be a cookie name (RFC 6265 token)',
    });
  });

  it('refuses the headers the job refuses, at headers.<name>', () => {
    expect(
      detailsOf(scrape({ headers: { Host: 'x', 'Proxy-Authorization': 'y', 'bad name': 'z' } })),
    ).toEqual({
      'headers.Host': 'may not be set: the service sets it',
      'headers.Proxy-Authorization': 'may not be set: the service sets it',
      'headers.bad name': 'is not a valid header name (RFC 9110 token)',
    });
  });

  it('takes User-Agent as the job’s user agent', () => {
    const fetch = fetchOf({ headers: { 'user-agent': 'MyBot/1' } });
    expect(fetch.userAgent).toBe('MyBot/1');
    expect(fetch.headers).toEqual({});
  });

  it('sends a phone’s user agent with mobile, unless a User-Agent header is given', () => {
    expect(fetchOf({ mobile: true }).userAgent).toBe(MOBILE_USER_AGENT);
    expect(fetchOf({ mobile: true, headers: { 'User-Agent': 'MyBot/1' } }).userAgent).toBe('MyBot/1');
    expect(fetchOf({ mobile: false }).userAgent).toBeNull();
  });

  it('takes location.country as the proxy country, upper case', () => {
    expect(fetchOf({ location: { country: 'de' } }).country).toBe('DE');
    expect(fetchOf({ location: { country: 'us-generic' } }).country).toBe('US');
    expect(fetchOf({ location: { languages: ['fr'] } }).country).toBeNull();
  });

  it('refuses a country that is not an ISO 3166-1 alpha-2 code', () => {
    expect(detailsOf(scrape({ location: { country: 'Germany' } }))).toEqual({
      'location.country': 'Invalid country code. Use a valid ISO 3166-1 alpha-2 country code.',
    });
  });

  it('sends location.languages as Accept-Language, unless that header is given', () => {
    expect(fetchOf({ location: { languages: ['de-DE', 'en'] } }).headers).toEqual({
      'Accept-Language': 'de-DE, en',
    });
    expect(
      fetchOf({ location: { languages: ['de'] }, headers: { 'accept-language': 'fr' } }).headers,
    ).toEqual({
      'accept-language': 'fr',
    });
  });

  it('reads v1’s deprecated geolocation as location', () => {
    expect(fetchOf({ geolocation: { country: 'fr' } }, 'v1').country).toBe('FR');
    expect(detailsOf(scrape({ geolocation: { country: 'fr' } }, 'v2'))).toEqual({
      geolocation: 'unknown field',
    });
  });
});
