import type { Page } from 'puppeteer';
import type { ResourceData } from 'puppeteer-cluster/dist/concurrency/ConcurrencyImplementation.js';
import singleBrowser from 'puppeteer-cluster/dist/concurrency/SingleBrowserImplementation.js';
import type { ProxyLease, SafetyProxy } from './proxy.ts';

// A CommonJS module: its default export arrives as a property of module.exports.
const SingleBrowserImplementation = singleBrowser.default;

/**
 * puppeteer-cluster's CONCURRENCY_CONTEXT model (one browser, one incognito context per job,
 * the library's crash repair, none after close), except that each context gets its own listener
 * of the safety proxy. The cluster creates the context before it hands the job over, so the job finds its
 * lease through `leases` and tells it the job's upstream proxy before navigating.
 */
export function isolatedContexts(proxy: SafetyProxy, leases: WeakMap<Page, ProxyLease>) {
  return class IsolatedContexts extends SingleBrowserImplementation {
    #closed = false;

    override async close(): Promise<void> {
      this.#closed = true;
      await super.close();
    }

    /**
     * The library repairs a crashed browser from a job's close and from its worker; once the
     * renderer is closed the launcher refuses to start another, and that refusal must not escape
     * as an unhandled rejection.
     */
    override async workerInstance() {
      const instance = await super.workerInstance();
      const ifOpen = (err: unknown) => {
        if (!this.#closed) throw err;
      };
      return {
        ...instance,
        repair: () => instance.repair().catch(ifOpen),
        jobInstance: async () => {
          const job = await instance.jobInstance();
          return { ...job, close: () => job.close().catch(ifOpen) };
        },
      };
    }

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
