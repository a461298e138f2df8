import { AppError, validationError } from '@scrapejobs/domain';
import type { Request, Response } from 'express';

/** Room a form has beyond its file: the options part and the parts' headers and boundaries. */
const FORM_OVERHEAD_BYTES = 1024 * 1024;

/**
 * A multipart/form-data body (415 for another type), read whole into memory up to `maxBytes` of
 * file plus FORM_OVERHEAD_BYTES: a larger body is a 413 as soon as it is seen (the connection is
 * closed after the answer, the rest never read), a malformed one a 400 at `body`.
 */
export async function readForm(req: Request, res: Response, maxBytes: number): Promise<FormData> {
  if (!req.is('multipart/form-data'))
    throw new AppError(
      415,
      'The request body must be multipart/form-data, with a file part and an options part.',
    );
  const limit = maxBytes + FORM_OVERHEAD_BYTES;
  const tooLarge = () => {
    res.set('Connection', 'close');
    return new AppError(
      413,
      `The request body exceeds ${limit} bytes: a file may have at most ${maxBytes} bytes.`,
    );
  };
  if (Number(req.headers['content-length'] ?? 0) > limit) throw tooLarge();
  const body = await new Promise<Uint8Array<ArrayBuffer>>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) return void chunks.push(chunk);
      // Stop reading: the answer goes out and the connection closes after it.
      req.off('data', onData);
      req.pause();
      chunks.length = 0;
      reject(tooLarge());
    };
    req.on('data', onData);
    req.once('end', () => resolve(Buffer.concat(chunks)));
    req.once('error', () =>
      reject(validationError({ body: 'could not be read (cut short)' }, 'The body could not be read.')),
    );
  });
  try {
    const type = req.headers['content-type'] ?? '';
    return await new Response(body, {
      headers: { 'content-type': type },
    }).formData();
  } catch {
    throw validationError({ body: 'is not a valid multipart/form-data body' }, 'The body could not be read.');
  }
}
