import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Request, Response } from 'express';

const FILES = {
  'console.css': 'text/css; charset=utf-8',
  'console.js': 'text/javascript; charset=utf-8',
} as const;

/** The stylesheet and the copy-button script, read once and served with an ETag. */
export function assetHandler() {
  const assets = new Map(
    Object.entries(FILES).map(([name, type]) => {
      const body = readFileSync(new URL(`../assets/${name}`, import.meta.url));
      const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 16)}"`;
      return [name, { body, type, etag }] as const;
    }),
  );
  return (req: Request, res: Response) => {
    const asset = assets.get(String(req.params.file));
    if (!asset) return res.status(404).type('text').send('Not found');
    res.set({ 'Content-Type': asset.type, ETag: asset.etag, 'Cache-Control': 'public, max-age=300' });
    if (req.get('if-none-match') === asset.etag) return res.status(304).end();
    res.send(asset.body);
  };
}
