import { createHash } from 'node:crypto';
import { zstdCompressSync, zstdDecompressSync } from 'node:zlib';
import type { PageDocument } from './document.ts';

/** A document as stored: its JSON compressed, with its size and the hash of its markdown. */
export interface PackedDocument {
  /** The JSON, zstd-compressed. */
  data: Uint8Array;
  /** UTF-8 bytes of the JSON. */
  bytes: number;
  /** The first 16 bytes of SHA-256 of the markdown, when it has one (equal markdown, equal hash). */
  markdownHash: Uint8Array | null;
}

/** Packs a document for storage (in the extraction thread, off the worker's event loop). */
export function packDocument(document: PageDocument): PackedDocument {
  const json = Buffer.from(JSON.stringify(document), 'utf8');
  const data = zstdCompressSync(json);
  return {
    // Its own memory, so the thread can hand it over without a copy.
    data: new Uint8Array(data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength)),
    bytes: json.length,
    markdownHash: document.markdown === undefined ? null : markdownHash(document.markdown),
  };
}

/** A stored document's JSON object. */
export function unpackDocument(data: Uint8Array): PageDocument {
  return JSON.parse(zstdDecompressSync(data).toString('utf8')) as PageDocument;
}

export function markdownHash(markdown: string): Uint8Array {
  return new Uint8Array(createHash('sha256').update(markdown).digest().subarray(0, 16));
}
