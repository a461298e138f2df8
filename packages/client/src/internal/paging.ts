/** A page of a list endpoint (docs/api.md §1, Pages). */
export interface Page {
  next_cursor: string | null;
}

/**
 * Every item of a list, page after page: fetches the next page (with `next_cursor`) only when
 * the items of the one before have been consumed, so a `break` stops the requests too.
 */
export async function* paginate<P extends Page, I>(
  fetchPage: (cursor: string | undefined) => Promise<P>,
  itemsOf: (page: P) => readonly I[],
  cursor?: string,
): AsyncGenerator<I, void, undefined> {
  let next = cursor;
  do {
    const page = await fetchPage(next);
    yield* itemsOf(page);
    // A cursor that does not move would loop for ever.
    next = page.next_cursor === next ? undefined : (page.next_cursor ?? undefined);
  } while (next !== undefined);
}
