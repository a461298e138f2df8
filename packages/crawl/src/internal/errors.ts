/** Thrown when a fetched body is not a sitemap (or is too large); retrying the same body cannot help. */
export class SitemapError extends Error {
  readonly code = 'SITEMAP_ERROR';
  override readonly name = 'SitemapError';
}
