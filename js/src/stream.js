// The seed's streaming decoder and MLEmbedClient over embd's frame decoder.
//
// decodeStream reads a batch envelope ([count u32 LE][frames], the seed's batch response)
// or, with {batch: false}, back-to-back frames, from a ReadableStream or any (async)
// iterable of byte chunks, and yields each frame as soon as its last byte has arrived.
// It holds at most one frame plus one chunk: a frame's size is known from its header
// (16 bytes; 20 with a zlib length), complete frames are decoded straight out of the
// chunk, and only a frame split across chunks is assembled in a buffer of its own size.
// A body that ends inside a frame is an EmbeddingCodecError (FRAME_TRUNCATED, offset =
// the frame's first byte) after every complete frame before it was yielded.
import { EmbeddingCodecError, init } from './embd.js';

const DT_BITS = [32, 16, 16, 8, 8, 8, 8, 1, 1];

// Bytes the frame starting at h (>= 16 header bytes, 20 if zlib) takes, or -1 if not yet known.
function frameSize(h, have) {
  const version = h[4], flags = h[5], dtype = version === 2 ? h[6] : 0;
  const dims = (h[8] | (h[9] << 8) | (h[10] << 16) | (h[11] << 24)) >>> 0;
  const tr = flags & 2 ? 4 : 0;
  if (flags & 1) {
    if (have < 20) return -1;
    const clen = (h[16] | (h[17] << 8) | (h[18] << 16) | (h[19] << 24)) >>> 0;
    return 20 + clen + tr;
  }
  const bits = DT_BITS[dtype] ?? 32; // an unknown dtype: the decoder reports it
  return 16 + Math.ceil((dims * bits) / 8) + tr;
}

async function* chunksOf(source) {
  if (source && typeof source.getReader === 'function') {
    const reader = source.getReader();
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        yield value;
      }
    } finally { reader.releaseLock(); }
  } else {
    for await (const c of source) yield c;
  }
}

function toU8(c) {
  if (typeof c === 'string') throw new EmbeddingCodecError('stream chunk is a string, expected bytes');
  if (c instanceof Uint8Array) return c;
  if (c instanceof ArrayBuffer) return new Uint8Array(c);
  if (ArrayBuffer.isView(c)) return new Uint8Array(c.buffer, c.byteOffset, c.byteLength);
  throw new EmbeddingCodecError(`stream chunk of type ${typeof c}, expected bytes`);
}

/** Frames of a streamed batch envelope (or bare frames) as they complete. Each result is
 * decodeEmbedding's, with a vector that owns its memory. */
export async function* decodeStream(source, { batch = true, maxFrameBytes = 1 << 30 } = {}) {
  const e = await init();
  let pend = new Uint8Array(0); // the bytes of an unfinished piece (count, header or frame)
  let abs = 0; // absolute offset of pend[0]
  let count = -1, seen = 0;
  // A zlib frame (flags bit 0) goes through decodeEmbeddingAsync: DecompressionStream
  // where node:zlib is absent.
  const take = async (frame, at) => {
    let r;
    try {
      r = frame[5] & 1 ? await e.decodeEmbeddingAsync(frame) : e.decodeEmbedding(frame);
    } catch (err) {
      if (err instanceof EmbeddingCodecError) err.offset += at;
      throw err;
    }
    // A view into a chunk or the assembly buffer: copy so the caller may keep it.
    if (!(frame[5] & 1)) r.vector = r.vector.slice();
    return r;
  };
  const append = (c, n) => {
    const grown = new Uint8Array(pend.length + n);
    grown.set(pend);
    grown.set(c.subarray(0, n), pend.length);
    pend = grown;
    return c.subarray(n);
  };
  for await (const raw of chunksOf(source)) {
    let c = toU8(raw);
    while (c.length) {
      if (batch && count < 0) { // the count prefix
        c = append(c, Math.min(4 - pend.length, c.length));
        if (pend.length < 4) break;
        count = (pend[0] | (pend[1] << 8) | (pend[2] << 16) | (pend[3] << 24)) >>> 0;
        abs = 4;
        pend = new Uint8Array(0);
        continue;
      }
      if (batch && seen === count) {
        throw new EmbeddingCodecError(`bytes after the last of the ${count} frames`, 'BATCH_TRAILING', abs, 22);
      }
      if (pend.length === 0 && c.length >= 16) { // a whole frame inside the chunk
        const size = frameSize(c, c.length);
        if (size >= 0 && size <= c.length) {
          yield await take(c.subarray(0, size), abs);
          seen++;
          abs += size;
          c = c.subarray(size);
          continue;
        }
      }
      // Assemble: the header (and zlib length) first, then the frame at its own size.
      let want = 16;
      if (pend.length >= 16) {
        const size = frameSize(pend, pend.length);
        want = size < 0 ? 20 : size;
      }
      if (want > maxFrameBytes) {
        throw new EmbeddingCodecError(`frame of ${want} bytes above the stream's limit ${maxFrameBytes}`, 'STREAM_FRAME_TOO_LARGE', abs, 23);
      }
      c = append(c, Math.min(want - pend.length, c.length));
      if (pend.length < want) continue; // c is empty now
      if (want === 16 || (want === 20 && frameSize(pend, pend.length) !== 20)) {
        const size = frameSize(pend, pend.length);
        if (size < 0 || size > pend.length) continue; // more to come
      }
      yield await take(pend, abs);
      seen++;
      abs += pend.length;
      pend = new Uint8Array(0);
    }
  }
  if (pend.length || (batch && count < 0)) {
    if (batch && count < 0) throw new EmbeddingCodecError(`stream ended after ${pend.length} of the 4 count bytes`, 'BATCH_TOO_SMALL', 0, 20);
    throw new EmbeddingCodecError(`stream ended inside frame ${seen}: ${pend.length} bytes of it arrived`, 'FRAME_TRUNCATED', abs, 11);
  }
  if (batch && seen !== count) {
    throw new EmbeddingCodecError(`stream ended after ${seen} of ${count} frames`, 'BATCH_COUNT', abs, 21);
  }
}

/** Codec session frames from a ReadableStream or async iterable of chunks, as they
 * complete ({type, typeName, offset, payload}; payload a copy; ids for TOKENS frames),
 * each checked by the C decoder. Memory: one frame plus one chunk. An input ending inside
 * a frame is CODEC_TRUNCATED at the end offset, after every complete frame. */
export async function* decodeFrameStream(source, { maxPayload = 16 << 20 } = {}) {
  const e = await init();
  let pend = new Uint8Array(0);
  let abs = 0;
  const one = (bytes, at) => {
    let f;
    try {
      [f] = e.decodeFrames(bytes);
    } catch (err) {
      if (err instanceof EmbeddingCodecError) err.offset += at;
      throw err;
    }
    const r = { type: f.type, typeName: f.typeName, offset: at, payload: f.payload.slice() };
    if (f.type === 2) r.ids = e.decodeTokens(bytes);
    return r;
  };
  const sizeOf = (h) => 5 + ((h[1] << 24) | (h[2] << 16) | (h[3] << 8) | h[4]) >>> 0;
  for await (const raw of chunksOf(source)) {
    let c = toU8(raw);
    while (c.length) {
      if (pend.length === 0 && c.length >= 5 && sizeOf(c) <= c.length) {
        const n = sizeOf(c);
        yield one(c.subarray(0, n), abs);
        abs += n;
        c = c.subarray(n);
        continue;
      }
      const want = pend.length >= 5 ? sizeOf(pend) : 5;
      if (want - 5 > maxPayload) {
        throw new EmbeddingCodecError(`frame at byte ${abs}: payload of ${want - 5} bytes above the maximum ${maxPayload}`, 'CODEC_FRAME_TOO_LARGE', abs + 1, 41);
      }
      const n = Math.min(want - pend.length, c.length);
      const grown = new Uint8Array(pend.length + n);
      grown.set(pend);
      grown.set(c.subarray(0, n), pend.length);
      pend = grown;
      c = c.subarray(n);
      if (pend.length >= 5 && pend.length === sizeOf(pend)) {
        yield one(pend, abs);
        abs += pend.length;
        pend = new Uint8Array(0);
      }
    }
  }
  if (pend.length) {
    throw new EmbeddingCodecError(`the input ends inside the frame at byte ${abs} (${pend.length} of its bytes)`, 'CODEC_TRUNCATED', abs + pend.length, 42);
  }
}

/** Codec's protobuf / msgpack stream modes from a ReadableStream or async iterable: each
 * frame as soon as its last byte is in (the C reader: memory one frame). A stream that ends
 * inside a frame is an error (PROTOBUF / MSGPACK) at the end, after every complete frame. */
async function* modeStream(reader, source, opts) {
  const e = await init();
  const r = e[reader](opts);
  try {
    for await (const raw of chunksOf(source)) yield* r.feed(toU8(raw));
    yield* r.finish();
  } finally { r.destroy(); }
}
export const decodeProtobufStream = (source, opts = {}) => modeStream('protobufReader', source, opts);
export const decodeMsgpackStream = (source, opts = {}) => modeStream('msgpackReader', source, opts);

/** The seed's HTTP client: binary frames with Accept: application/octet-stream, the JSON
 * fallback when the server answers JSON, batches decoded as the body streams in. */
export class MLEmbedClient {
  constructor(baseUrl, apiKey, { fetch: f } = {}) {
    this.baseUrl = baseUrl;
    this.apiKey = apiKey;
    this.fetch = f ?? globalThis.fetch.bind(globalThis);
  }

  async post(path, body, useBinary) {
    const response = await this.fetch(`${this.baseUrl}${path}`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        Authorization: `Bearer ${this.apiKey}`,
        Accept: useBinary ? 'application/octet-stream' : 'application/json',
      },
      body: JSON.stringify(body),
    });
    return response;
  }

  static isJson(response) {
    return /^application\/(.+\+)?json/i.test(response.headers.get('content-type') ?? '');
  }

  async embedOne(text, opts = {}) {
    const useBinary = opts.useBinaryCodec ?? true;
    const response = await this.post('/v1/embed', { text, model: opts.model ?? 'default' }, useBinary);
    if (!response.ok) throw new Error(`Embed service request failed: ${response.status} ${response.statusText}`);
    if (useBinary && !MLEmbedClient.isJson(response)) {
      const e = await init();
      return (await e.decodeEmbeddingAsync(await response.arrayBuffer())).vector.slice();
    }
    const json = await response.json();
    return new Float32Array(json.embedding);
  }

  async *embedBatch(texts, opts = {}) {
    const useBinary = opts.useBinaryCodec ?? true;
    const response = await this.post('/v1/embed/batch', { texts, model: opts.model ?? 'default' }, useBinary);
    if (!response.ok) throw new Error(`Embed service batch request failed: ${response.status}`);
    if (useBinary && !MLEmbedClient.isJson(response)) {
      for await (const frame of decodeStream(response.body)) yield frame.vector;
      return;
    }
    const json = await response.json();
    for (const embedding of json.embeddings) yield new Float32Array(embedding);
  }
}
