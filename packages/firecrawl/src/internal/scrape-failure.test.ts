import { scrapeFailure } from './scrape-failure.ts';

const failure = (code: string, message: string, httpStatus: number | null = null) =>
  scrapeFailure({ code, message, httpStatus });

describe('scrapeFailure', () => {
  it.each([
    ['NETWORK_ERROR', 'self-signed certificate', 'SCRAPE_SSL_ERROR'],
    ['NETWORK_ERROR', 'certificate has expired', 'SCRAPE_SSL_ERROR'],
    ['NETWORK_ERROR', "Hostname/IP does not match certificate's altnames", 'SCRAPE_SSL_ERROR'],
    ['RENDER_ERROR', 'net::ERR_CERT_AUTHORITY_INVALID at https://a.test/', 'SCRAPE_SSL_ERROR'],
    ['NETWORK_ERROR', 'getaddrinfo ENOTFOUND nowhere.invalid', 'SCRAPE_DNS_RESOLUTION_ERROR'],
    ['RENDER_ERROR', 'net::ERR_NAME_NOT_RESOLVED at https://a.test/', 'SCRAPE_DNS_RESOLUTION_ERROR'],
    ['NETWORK_ERROR', 'connect ECONNREFUSED 127.0.0.1:9', 'SCRAPE_SITE_ERROR'],
    ['RENDER_ERROR', 'The page could not be reached: ECONNREFUSED', 'SCRAPE_SITE_ERROR'],
    ['RENDER_ERROR', 'action 2 (click #go): no element matches', 'SCRAPE_ACTION_ERROR'],
    ['PROXY_ERROR', 'proxy failed: ECONNRESET', 'SCRAPE_ALL_ENGINES_FAILED'],
  ])('answers a 500 for %s "%s" with %s', (code, message, expected) => {
    expect(failure(code, message)).toMatchObject({ status: 500, code: expected });
  });

  it('answers a timeout with 408 SCRAPE_TIMEOUT and a refused target with 403 BLOCKED_TARGET', () => {
    expect(failure('TIMEOUT', 'no complete response within 30000 ms')).toEqual({
      status: 408,
      code: 'SCRAPE_TIMEOUT',
      error: 'no complete response within 30000 ms',
    });
    expect(failure('BLOCKED_TARGET', 'the address 10.0.0.1 is private')).toMatchObject({
      status: 403,
      code: 'BLOCKED_TARGET',
    });
  });

  it('tells how to accept a bad certificate', () => {
    expect(failure('NETWORK_ERROR', 'self-signed certificate')?.error).toContain('skipTlsVerification');
  });

  it('leaves pages that answered, and failures that are not fetching, to the success answer', () => {
    expect(failure('HTTP_ERROR', 'HTTP 404', 404)).toBeNull();
    expect(failure('NETWORK_ERROR', 'socket hang up', 200)).toBeNull();
    expect(failure('RENDER_ERROR', 'The rendered page is larger than 10 MiB.')).toBeNull();
    expect(failure('EXTRACTION_ERROR', 'bad selector')).toBeNull();
  });
});
