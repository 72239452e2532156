// Search: a regular expression over the name table, and the exact matched value as the
// length of the union of the matched names' intervals (docs/FORMAT.md "Search buckets"), so
// nested matches (a matched function calling another, or itself) count once. Only the
// buckets that hold matched names are fetched; never a frame chunk.

/** `s` with every regex metacharacter escaped, so it matches itself literally. */
export function escapeRegExp(s) {
  return s.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
}

/** The exact-name query for a function: what a click in the top table searches for. */
export function exactQuery(name) {
  return `^${escapeRegExp(name)}$`;
}

/** Compile a query: { re } or { error } with the browser's message. An empty query is { re: null }. */
export function compileQuery(query, caseSensitive) {
  if (!query) return { re: null };
  try {
    return { re: new RegExp(query, caseSensitive ? "" : "i") };
  } catch (e) {
    return { error: e.message };
  }
}

/** Name ids whose name the regex matches, ascending, and a flag per name id. */
export function matchNames(names, re) {
  const flags = new Uint8Array(names.length);
  const ids = [];
  for (let i = 0; i < names.length; i++) {
    if (re.test(names[i])) {
      flags[i] = 1;
      ids.push(i);
    }
  }
  return { ids, flags };
}

/** Index of the search bucket entry covering name id `n` (entries are in order, no gaps). */
export function bucketIndex(search, n) {
  let lo = 0;
  let hi = search.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >>> 1;
    if (search[mid].names[0] <= n) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** The bucket entries needed for ascending name ids, each once. */
export function bucketsFor(search, ids) {
  const out = [];
  let last = -1;
  for (const n of ids) {
    if (last >= 0 && n < search[last].names[1]) continue;
    last = bucketIndex(search, n);
    out.push(search[last]);
  }
  return out;
}

/**
 * Length of the union of intervals, optionally clipped to [lo, hi). `starts` and `ends` are
 * parallel arrays (interval i is [starts[i], ends[i])). Sorts copies of both and sweeps:
 * O(k log k) with native typed-array sorts, no per-interval objects.
 */
export function unionLength(starts, ends, lo = -Infinity, hi = Infinity) {
  const s = Float64Array.from(starts).sort();
  const e = Float64Array.from(ends).sort();
  const k = s.length;
  let i = 0;
  let j = 0;
  let open = 0;
  let at = 0;
  let sum = 0;
  while (i < k || j < k) {
    // Process a start before an end at the same coordinate, so touching intervals join.
    const takeStart = i < k && s[i] <= e[j];
    const x = takeStart ? s[i] : e[j];
    if (open > 0) {
      const a = Math.max(at, lo);
      const b = Math.min(x, hi);
      if (b > a) sum += b - a;
    }
    at = x;
    if (takeStart) {
      open += 1;
      i += 1;
    } else {
      open -= 1;
      j += 1;
    }
  }
  return sum;
}

/**
 * The matched value of name ids `ids`, from decoded buckets (any that cover them): the union
 * of their intervals. `lo`/`hi` clip it to a zoomed range. Returns { value, inRange }.
 */
export function matchedValue(buckets, ids, lo = -Infinity, hi = Infinity) {
  let count = 0;
  const spans = [];
  for (const n of ids) {
    const b = buckets.find((x) => x.nameLo <= n && n < x.nameHi);
    if (!b) throw new Error(`no search bucket holds name ${n}`);
    const a = b.start[n - b.nameLo];
    const z = b.start[n - b.nameLo + 1];
    if (z > a) {
      spans.push(b, a, z);
      count += z - a;
    }
  }
  const starts = new Float64Array(count);
  const ends = new Float64Array(count);
  let w = 0;
  for (let t = 0; t < spans.length; t += 3) {
    const iv = spans[t].iv;
    for (let j = spans[t + 1]; j < spans[t + 2]; j++) {
      starts[w] = iv[2 * j];
      ends[w] = iv[2 * j + 1];
      w += 1;
    }
  }
  // A single name's intervals are already disjoint: no sort needed.
  const single = ids.length <= 1;
  const value = single ? sumLengths(starts, ends, -Infinity, Infinity) : unionLength(starts, ends);
  const inRange =
    lo === -Infinity && hi === Infinity ? value : single ? sumLengths(starts, ends, lo, hi) : unionLength(starts, ends, lo, hi);
  return { value, inRange };
}

function sumLengths(starts, ends, lo, hi) {
  let sum = 0;
  for (let i = 0; i < starts.length; i++) {
    const a = Math.max(starts[i], lo);
    const b = Math.min(ends[i], hi);
    if (b > a) sum += b - a;
  }
  return sum;
}
