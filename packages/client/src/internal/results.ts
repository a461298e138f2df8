import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { Readable, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { ConnectionError } from './errors.ts';
import { jobPath } from './jobs.ts';
import { paginate } from './paging.ts';
import type { Transport } from './transport.ts';
import type { DownloadQuery, ListResultsQuery, Result, ResultList } from './types.ts';

/** A download as it starts: the body not read yet. */
export interface DownloadStream {
  /** The file's bytes as they come; read it (or destroy it) to free the connection. */
  body: Readable;
  contentType: string;
  /** The attachment's name, `<job_id>-<run_id>.<ext>` (`<job_id>-<run_id>-documents.<ext>` for documents). */
  filename: string | null;
  /** Bytes in all when the API said so (downloads are streamed, so usually null). */
  size: number | null;
}

export interface DownloadProgress {
  bytes: number;
  size: number | null;
}

export interface DownloadOptions extends DownloadQuery {
  /** A file path (written whole or not at all) or a writable stream (ended when done). */
  to: string | Writable;
  onProgress?: (progress: DownloadProgress) => void;
}

export interface DownloadDone {
  bytes: number;
  contentType: string;
  filename: string | null;
}

/** A run's records, page by page or as one file; its documents as one file (docs/api.md §5, §17). */
export class Results {
  readonly #t: Transport;
  constructor(transport: Transport) {
    this.#t = transport;
  }

  /** GET /jobs/{id}/results: one page of a run's records (default: the latest ended run). */
  list(jobId: string, query: ListResultsQuery = {}): Promise<ResultList> {
    return this.#t.json('GET', `${jobPath(jobId)}/results`, { query });
  }

  /** Every record of a run, in the order stored, page after page. */
  iterate(jobId: string, query: ListResultsQuery = {}): AsyncGenerator<Result, void, undefined> {
    return paginate(
      (cursor) => this.list(jobId, { ...query, cursor }),
      (page) => page.results,
      query.cursor,
    );
  }

  /** GET /jobs/{id}/download (records, or `content: 'documents'`), the body left to stream. */
  async open(jobId: string, query: DownloadQuery = {}): Promise<DownloadStream> {
    const res = await this.#t.send('GET', `${jobPath(jobId)}/download`, { query: { ...query } });
    const length = res.headers.get('content-length');
    const disposition = res.headers.get('content-disposition') ?? '';
    return {
      body: res.body ? Readable.fromWeb(res.body as WebReadableStream<Uint8Array>) : Readable.from([]),
      contentType: res.headers.get('content-type') ?? 'application/octet-stream',
      filename: /filename="([^"]+)"/.exec(disposition)?.[1] ?? null,
      size: length === null ? null : Number(length),
    };
  }

  /** Streams a run's file to a path or a stream, with memory flat however big it is. */
  async download(jobId: string, options: DownloadOptions): Promise<DownloadDone> {
    const { to, onProgress, ...query } = options;
    const file = await this.open(jobId, query);
    let bytes = 0;
    let cut = false;
    async function* counted(): AsyncGenerator<Buffer> {
      try {
        for await (const chunk of file.body as AsyncIterable<Buffer>) {
          bytes += chunk.length;
          onProgress?.({ bytes, size: file.size });
          yield chunk;
        }
      } catch (err) {
        cut = true; // the answer stopped coming, rather than the destination failing
        throw err;
      }
    }
    try {
      if (typeof to === 'string') await writeFileAtomically(to, counted());
      else await pipeline(counted(), to);
    } catch (err) {
      if (cut) throw new ConnectionError(`the download was cut after ${bytes} bytes`, err);
      throw err;
    }
    return { bytes, contentType: file.contentType, filename: file.filename };
  }
}

/** Writes beside the target and renames at the end, so a broken download leaves no half file. */
async function writeFileAtomically(path: string, body: AsyncIterable<Buffer>): Promise<void> {
  const partial = join(dirname(path), `.${basename(path)}.${randomBytes(4).toString('hex')}.part`);
  try {
    await pipeline(body, createWriteStream(partial));
    await rename(partial, path);
  } catch (err) {
    await rm(partial, { force: true });
    throw err;
  }
}
