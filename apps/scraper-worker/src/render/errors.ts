type RenderErrorCode = 'RENDER_ERROR' | 'TIMEOUT' | 'BLOCKED_TARGET' | 'PROXY_ERROR';

/** A render that failed; `code` is a job.failed error code (docs/api.md §6). */
export class RenderError extends Error {
  override readonly name = 'RenderError';
  readonly code: RenderErrorCode;
  readonly retryable: boolean;
  /** Set when the browser itself died under the render, so the render may run again elsewhere. */
  readonly browserCrashed: boolean;

  constructor(
    code: RenderErrorCode,
    message: string,
    opts: { retryable: boolean; browserCrashed?: boolean; cause?: unknown },
  ) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.code = code;
    this.retryable = opts.retryable;
    this.browserCrashed = opts.browserCrashed ?? false;
  }
}

/** What a render rejects with when its signal aborts: the signal's reason, as fetch() does. */
export function abortReason(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  if (reason instanceof Error) return reason;
  return new DOMException(`The render was aborted (${String(reason)})`, 'AbortError');
}
