// Page fetching for the scraper worker. Outbound safety (docs/api.md §7): every request, redirect
// hops and retries included, connects only to addresses the policy allows: names are checked
// inside the resolver that the connection itself uses, IP literals before connecting, and the
// connected peer again on 'connect'. Behind a proxy the worker resolves and checks the target
// and asks the proxy to tunnel to that address; what the proxy itself then reaches is up to it.
export { SCRAPER_ADDRESS_RULES } from './address.ts';
export { ConnectionPool } from './connections.ts';
export { FetchError, type FetchErrorCode } from './errors.ts';
export {
  type BeforeAttempt,
  type FetchedPage,
  type FetchOptions,
  fetchPage,
  type HostAnswer,
  type RequestPace,
  type Validators,
} from './fetch-page.ts';
export { createProxyPicker, type ProxyPicker } from './proxy-picker.ts';
