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

/**
 * The top-level alternatives of a regex: `a|(b|c)|[|]` is ["a", "(b|c)", "[|]"]. A `|` inside
 * a group or a character class, or escaped, does not split. An empty query has none.
 */
export function alternatives(query) {
  if (!query) return [];
  const out = [];
  let depth = 0;
  let inClass = false;
  let start = 0;
  for (let i = 0; i < query.length; i++) {
    const ch = query[i];
    if (ch === "\\") i += 1;
    else if (inClass) inClass = ch !== "]";
    else if (ch === "[") inClass = true;
    else if (ch === "(") depth += 1;
    else if (ch === ")") depth = Math.max(0, depth - 1);
    else if (ch === "|" && depth === 0) {
      out.push(query.slice(start, i));
      start = i + 1;
    }
  }
  out.push(query.slice(start));
  return out;
}

/**
 * A click on a row of the top table: the query with `name`'s exact alternative (`^name$`,
 * escaped) added, or taken out when it is there already; other alternatives stay as they are.
 */
export function toggleExact(query, name) {
  const exact = exactQuery(name);
  const alts = alternatives(query);
  const kept = alts.filter((a) => a !== exact);
  if (kept.length === alts.length) kept.push(exact);
  return kept.filter((a) => a !== "").join("|");
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
 * parallel arrays (interval i is [starts[i], ends[i])). Sorts the intervals by start (one
 * native sort of packed keys for u32 values, else a bucket sort over the value range, linear
 * for the spread-out starts of a flame graph), then merges them in one sweep; falls back to
 * two native sorts when the starts are clustered.
 */
export function unionLength(starts, ends, lo = -Infinity, hi = Infinity) {
  const n = starts.length;
  if (n === 0) return 0;
  const sorted = packedSortPairs(starts, ends) || bucketSortPairs(starts, ends);
  if (!sorted) return sweepUnion(starts, ends, lo, hi);
  const [S, E] = sorted;
  let sum = 0;
  let a = S[0];
  let z = E[0];
  for (let i = 1; i < n; i++) {
    if (S[i] <= z) {
      if (E[i] > z) z = E[i];
    } else {
      sum += clipped(a, z, lo, hi);
      a = S[i];
      z = E[i];
    }
  }
  return sum + clipped(a, z, lo, hi);
}

function clipped(a, z, lo, hi) {
  const x = a > lo ? a : lo;
  const y = z < hi ? z : hi;
  return y > x ? y - x : 0;
}

const PACK = 2 ** 20; // intervals a packed sort takes at most

/**
 * Pairs sorted by start with one native sort, for u32 values and fewer than 2^20 intervals:
 * each start and its index packed into one exact double (start * 2^20 + i < 2^52), sorted by
 * TypedArray.prototype.sort (native code, where the first search runs this file unoptimised).
 * Null when the values or the count do not fit.
 */
function packedSortPairs(starts, ends) {
  const n = starts.length;
  if (!(starts instanceof Uint32Array) || n >= PACK) return null;
  const keys = new Float64Array(n);
  for (let i = 0; i < n; i++) keys[i] = starts[i] * PACK + i;
  keys.sort();
  const S = new Uint32Array(n);
  const E = new Uint32Array(n);
  for (let k = 0; k < n; k++) {
    const key = keys[k];
    const i = key % PACK;
    S[k] = (key - i) / PACK;
    E[k] = ends[i];
  }
  return [S, E];
}

/** Pairs sorted by start, or null when the starts are too clustered for buckets to pay. */
export function bucketSortPairs(starts, ends) {
  const n = starts.length;
  let min = Infinity;
  let max = -Infinity;
  for (let i = 0; i < n; i++) {
    const s = starts[i];
    if (s < min) min = s;
    if (s > max) max = s;
  }
  const scale = max > min ? (n - 1) / (max - min) : 0;
  const pos = new Uint32Array(n + 1);
  const bucket = new Uint32Array(n);
  for (let i = 0; i < n; i++) {
    const b = Math.min(n - 1, Math.floor((starts[i] - min) * scale));
    bucket[i] = b;
    pos[b + 1] += 1;
  }
  for (let b = 0; b < n; b++) pos[b + 1] += pos[b];
  const S = new starts.constructor(n);
  const E = new ends.constructor(n);
  for (let i = 0; i < n; i++) {
    const p = pos[bucket[i]]++;
    S[p] = starts[i];
    E[p] = ends[i];
  }
  // Buckets are in order; an insertion sort finishes each. Give up past a budget of moves.
  let budget = 16 * n + 1024;
  for (let i = 1; i < n; i++) {
    const s = S[i];
    if (S[i - 1] <= s) continue;
    const e = E[i];
    let j = i - 1;
    while (j >= 0 && S[j] > s) {
      S[j + 1] = S[j];
      E[j + 1] = E[j];
      j -= 1;
    }
    S[j + 1] = s;
    E[j + 1] = e;
    budget -= i - j;
    if (budget < 0) return null;
  }
  return [S, E];
}

/** The same union by sorting starts and ends separately and sweeping; O(k log k) always. */
export function sweepUnion(starts, ends, lo = -Infinity, hi = Infinity) {
  const s = Float64Array.from(starts).sort();
  const e = Float64Array.from(ends).sort();
  const k = s.length;
  let i = 0;
  let j = 0;
  let open = 0;
  let at = 0;
  let sum = 0;
  while (i < k || j < k) {
    // A start before an end at the same coordinate, so touching intervals join.
    const takeStart = i < k && s[i] <= e[j];
    const x = takeStart ? s[i] : e[j];
    if (open > 0) sum += clipped(at, x, lo, hi);
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
  // Integer arrays when the buckets hold u32 values: reading them gives small integers, where
  // every read of a Float64Array in unoptimised code allocates a number.
  const Values = buckets.every((b) => b.iv instanceof Uint32Array) ? Uint32Array : Float64Array;
  const starts = new Values(count);
  const ends = new Values(count);
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
