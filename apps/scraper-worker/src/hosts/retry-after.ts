/** Milliseconds a Retry-After value (seconds or HTTP date) asks for, at most `capMs`; undefined when absent or invalid. */
export function retryAfterMs(
  value: string | undefined,
  capMs: number,
  now: number = Date.now(),
): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  let ms: number;
  if (/^\d+$/.test(text)) {
    ms = Number(text) * 1000;
  } else {
    // An HTTP date names its weekday and month; Date.parse alone would also take "-1" as a year.
    const date = /[a-z]/i.test(text) ? Date.parse(text) : Number.NaN;
    if (Number.isNaN(date)) return undefined;
    ms = Math.max(0, date - now);
  }
  return Math.min(ms, capMs);
}
