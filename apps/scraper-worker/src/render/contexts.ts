import type { Page } from 'puppeteer';
import type { ResourceData } from 'puppeteer-cluster/dist/concurrency/ConcurrencyImplementation.js';
import singleBrowser from 'puppeteer-cluster/dist/concurrency/SingleBrowserImplementation.js';
import type { ProxyLease, SafetyProxy } from './proxy.ts';

// A CommonJS module: its default export arrives as a property of module.exports.
const SingleBrowserImplementation = singleBrowser.default;

/**
 * puppeteer-cluster's CONCURRENCY_CONTEXT model (one browser, one incognito context per job,
 * the library's crash repair), except that each context gets its own listener of the safety
 * proxy. The cluster creates the context before it hands the job over, so the job finds its
 * lease through `leases` and tells it the job's upstream proxy before navigating.
 */
export function isolatedContexts(proxy: SafetyProxy, leases: WeakMap<Page, ProxyLease>) {
  return class IsolatedContexts extends SingleBrowserImplementation {
    protected override async createResources(): Promise<ResourceData> {
      const browser = this.browser;
      if (!browser) throw new Error('The browser is not running.');
      const lease = await proxy.acquire();
      try {
        const context = await browser.createBrowserContext({
          proxyServer: lease.server,
          // Chromium never proxies loopback unless told so; loopback must be checked too.
          proxyBypassList: ['<-loopback>'],
        });
        try {
          const page = await context.newPage();
          leases.set(page, lease);
          return { page, context, lease };
        } catch (err) {
          await context.close().catch(() => {});
          throw err;
        }
      } catch (err) {
        lease.release();
        throw err;
      }
    }

    protected override async freeResources(resources: ResourceData): Promise<void> {
      try {
        await resources.context.close();
      } finally {
        (resources.lease as ProxyLease).release();
      }
    }
  };
}
