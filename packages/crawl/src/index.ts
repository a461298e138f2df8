export { SitemapError } from './internal/errors.ts';
export {
  type CompiledPattern,
  compileUrlPattern,
  LinkFilter,
  type LinkFilterOptions,
} from './internal/link-filter.ts';
export {
  MAX_CRAWL_DELAY_MS,
  parseRobots,
  type RobotsRule,
  type RobotsRules,
  robotsAllows,
} from './internal/robots.ts';
export { readSitemap, type Sitemap } from './internal/sitemap.ts';
export { normalizeUrl, originOf, urlKey } from './internal/url.ts';
