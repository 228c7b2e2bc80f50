// Keyset paging, written once for every long read of the store (the verifier's chain walks, export's
// records and findings): each page starts after the last row's key, so no cursor stays open and memory
// stays bounded; a page shorter than the limit is the last.
export async function* keysetPages<T, K>(
  read: (after: K, limit: number) => Promise<T[]>,
  options: { first: K; limit: number; keyOf: (row: T) => K },
): AsyncGenerator<T[]> {
  let after = options.first;
  for (;;) {
    const rows = await read(after, options.limit);
    if (rows.length === 0) return;
    yield rows;
    if (rows.length < options.limit) return;
    after = options.keyOf(rows[rows.length - 1]!);
  }
}
