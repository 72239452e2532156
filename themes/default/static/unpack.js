// The build publishes data files as gzip members (`c/0-0.bin.gz`, docs/FORMAT.md), so that
// hosts that compress nothing still send them small. A host may also undo that compression on
// the way (one that sends `.gz` files with `Content-Encoding: gzip`): the browser then hands
// over the bytes inside. Either way the page gets the file's own bytes, told apart by the two
// bytes every gzip member starts with, which no flamesite file starts with.

/** True when `bytes` (a Uint8Array) begin as a gzip member does. */
export function isPacked(bytes) {
  return bytes.length >= 2 && bytes[0] === 0x1f && bytes[1] === 0x8b;
}

/** The bytes of a fetched data file as an ArrayBuffer, decompressed when they are packed. */
export async function unpack(buf) {
  if (!isPacked(new Uint8Array(buf, 0, Math.min(2, buf.byteLength)))) return buf;
  const stream = new Blob([buf]).stream().pipeThrough(new DecompressionStream("gzip"));
  return new Response(stream).arrayBuffer();
}

/** The bytes of a response, decompressed when they are packed. */
export async function bytesOf(res) {
  return unpack(await res.arrayBuffer());
}

/** The JSON of a response whose bytes may be packed. */
export async function jsonOf(res) {
  return JSON.parse(new TextDecoder().decode(await bytesOf(res)));
}
