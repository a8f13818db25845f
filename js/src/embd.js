// embd for JavaScript: the C library compiled to WebAssembly (scripts/build-wasm.sh), two
// modules (SIMD128 and scalar), picked with WebAssembly.validate. Everything is
// synchronous after one `await init()`.
//
// The seed codec's hot path stays in JavaScript: a version-1 float32 frame without flags
// is a header check (magic, version, padding, the 12-byte CRC by a table) and a
// Float32Array view, as in the seed, because handing 6 KiB to the module would cost more
// than the whole decode. Any other frame (version 2 dtypes, payload CRC trailers, faults)
// goes to the C decoder, so every error carries the C library's code, byte offset and
// message.

const HEADER = 16;
const MAGIC = 0x454d4244;

/** Codec frame types (embd/codec.h). */
export const FRAME = { HELLO: 0, READY: 1, TOKENS: 2, EOS: 3, ERROR: 4, LATENT_HEADER: 5, LATENTS: 6 };
const CODEC_TYPES = ['HELLO', 'READY', 'TOKENS', 'EOS', 'ERROR', 'LATENT_HEADER', 'LATENTS'];
export const DTYPES = ['f32', 'f16', 'bf16', 'fp8_e4m3', 'fp8_e5m2', 'int8', 'uint8', 'binary', 'ubinary'];
const DTYPE_ALIASES = { float32: 0, float: 0, float16: 1, half: 1, bfloat16: 2, e4m3: 3, e5m2: 4,
  'fp8-e4m3': 3, 'fp8-e5m2': 4, i8: 5, u8: 6 };

// embd_result names by code (include/embd/common.h).
const RESULT_NAMES = {
  0: 'OK', 1: 'INVALID_ARGUMENT', 2: 'UNKNOWN_ISA', 3: 'UNSUPPORTED_ISA', 4: 'OUTPUT_TOO_SMALL',
  5: 'FRAME_TOO_SMALL', 6: 'FRAME_BAD_MAGIC', 7: 'FRAME_BAD_VERSION', 8: 'FRAME_BAD_PADDING',
  9: 'FRAME_UNKNOWN_FLAGS', 10: 'FRAME_HEADER_CRC', 11: 'FRAME_TRUNCATED',
  12: 'FRAME_DIMS_TOO_LARGE', 13: 'FRAME_DIMS_MISMATCH', 14: 'FRAME_PAYLOAD_CRC',
  15: 'FRAME_COMPRESSED_LENGTH', 16: 'FRAME_INFLATE', 17: 'FRAME_TRAILING',
  18: 'FRAME_VIEW_UNAVAILABLE', 19: 'FRAME_DEFLATE', 20: 'BATCH_TOO_SMALL', 21: 'BATCH_COUNT',
  22: 'BATCH_TRAILING', 23: 'STREAM_FRAME_TOO_LARGE', 24: 'BASE64_LENGTH', 25: 'BASE64_CHAR',
  26: 'BASE64_PADDING', 27: 'BASE64_TRAILING_BITS', 28: 'BASE64_F32_LENGTH', 29: 'OPENAI_JSON',
  30: 'OPENAI_SHAPE', 31: 'OPENAI_INDEX', 32: 'OPENAI_DIMS', 33: 'OPENAI_COUNT',
  34: 'OPENAI_MODEL', 35: 'OUT_OF_MEMORY', 37: 'CODEC_UNKNOWN_TYPE', 38: 'CODEC_TOKENS_LENGTH',
  39: 'CODEC_EOS_PAYLOAD', 40: 'CODEC_UTF8', 41: 'CODEC_FRAME_TOO_LARGE', 42: 'CODEC_TRUNCATED',
  43: 'CODEC_HANDSHAKE', 44: 'CODEC_NO_TOKENIZER', 45: 'MSGPACK', 46: 'PROTOBUF', 47: 'MAP_SCHEMA',
  48: 'MAP_HASH', 49: 'UNKNOWN_TOKEN', 50: 'UNAVAILABLE', 53: 'DTYPE_LENGTH',
  54: 'DTYPE_RANGE', 55: 'FRAME_BAD_DTYPE', 56: 'OPENAI_DTYPE',
};

/** The seed's error class, with the C library's result name (.code), number (.result) and
 * the byte where the fault is (.offset). */
export class EmbeddingCodecError extends Error {
  constructor(message, code = 'INVALID_ARGUMENT', offset = 0, result = 1) {
    super(`[EmbeddingCodec] ${message}`);
    this.name = 'EmbeddingCodecError';
    this.code = code;
    this.offset = offset;
    this.result = result;
  }
}

function dtypeCode(d) {
  if (d === undefined || d === null) return 0;
  if (typeof d === 'number' && d >= 0 && d < DTYPES.length && Number.isInteger(d)) return d;
  const i = DTYPES.indexOf(d);
  if (i >= 0) return i;
  if (Object.hasOwn(DTYPE_ALIASES, d)) return DTYPE_ALIASES[d];
  throw new EmbeddingCodecError(`unknown dtype ${JSON.stringify(d)} (${DTYPES.join(', ')})`);
}
function orderCode(o) {
  if (o === undefined || o === null || o === 'little' || o === 'le') return 0;
  if (o === 'big' || o === 'be') return 1;
  throw new EmbeddingCodecError(`unknown byte order ${JSON.stringify(o)} (little, big)`);
}

// CRC-32 of 12 header bytes, slice-by-1 table (the header CRC on the fast path).
const CRC_T = (() => {
  const t = new Int32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0xedb88320 : c >>> 1;
    t[n] = c;
  }
  return t;
})();
function crc12(u8, at) {
  let c = -1;
  for (let i = at; i < at + 12; i++) c = CRC_T[(c ^ u8[i]) & 0xff] ^ (c >>> 8);
  return ~c >>> 0;
}

const LITTLE = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

function bytesOf(buf, what = 'buffer') {
  if (buf instanceof Uint8Array) return buf;
  if (buf instanceof ArrayBuffer || (typeof SharedArrayBuffer !== 'undefined' && buf instanceof SharedArrayBuffer))
    return new Uint8Array(buf);
  if (ArrayBuffer.isView(buf)) return new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
  throw new EmbeddingCodecError(`${what}: expected an ArrayBuffer or a typed array, got ${typeof buf}`);
}

const ENC = new TextEncoder();
const DEC = new TextDecoder();

// wasi_snapshot_preview1: stdio and getenv are linked in but never reached on the paths
// the glue uses; environ is empty (no EMBD_ISA: tiers are set with setIsa).
function wasiStubs(getMem) {
  return {
    environ_sizes_get: (pc, ps) => { const v = new DataView(getMem().buffer); v.setUint32(pc, 0, true); v.setUint32(ps, 0, true); return 0; },
    environ_get: () => 0,
    fd_write: () => 52, fd_seek: () => 52, fd_close: () => 52,
    proc_exit: (c) => { throw new Error(`embd wasm: abort (exit ${c})`); },
  };
}

// The 31-byte SIMD128 probe (a function returning an i8x16.splat... v128 op).
const SIMD_PROBE = new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 123, 3,
  2, 1, 0, 10, 10, 1, 8, 0, 65, 0, 253, 15, 253, 98, 11]);
export function simdSupported() {
  try { return WebAssembly.validate(SIMD_PROBE); } catch { return false; }
}

async function loadBytes(name) {
  const url = new URL(`../dist/${name}`, import.meta.url);
  if (url.protocol === 'file:') {
    const { readFile } = await import('node:fs/promises');
    return readFile(url);
  }
  const r = await fetch(url);
  if (!r.ok) throw new Error(`embd: ${url}: HTTP ${r.status}`);
  return new Uint8Array(await r.arrayBuffer());
}

/** One instance of the module with the whole API bound to it. */
export class Embd {
  constructor(instance, simd) {
    this.simd = simd;
    this.x = instance.exports;
    this.x._initialize?.();
    this.errPtr = this.x.embd_js_err();
    this.outPtr = this.x.embd_js_out();
    this.scratch = 0;
    this.scratchCap = 0;
  }

  // ---- memory helpers ----
  get mem() { return this.x.memory; }
  // Views of the module's memory, made again only when it has grown (growing detaches the
  // old buffer): making typed arrays on every call cost ~1 us of a 1536-float decode.
  views() {
    const b = this.x.memory.buffer;
    if (b !== this.viewBuf) {
      this.viewBuf = b;
      this.viewU8 = new Uint8Array(b);
      this.viewOut = new Uint32Array(b, this.outPtr, 16);
    }
    return this;
  }
  u8() { return this.views().viewU8; }
  out(i) { return this.views().viewOut[i]; }
  alloc(n) {
    const p = this.x.embd_js_malloc(n);
    if (!p) throw new EmbeddingCodecError(`out of WebAssembly memory (${n} bytes)`, 'OUT_OF_MEMORY', 0, 35);
    return p;
  }
  free(p) { this.x.embd_js_free(p); }
  // C objects owned by a JavaScript object (a tokenizer map, a detokenizer, a stream-mode
  // reader, a batch generator): the owner's free()/destroy() releases them at once; an owner
  // collected without it is released by a FinalizationRegistry (engines without one: as
  // before, the caller's call or a leak), since the module's memory never shrinks. h (held())
  // is the registry's held value, so it must not refer to the owner (which could then never
  // be collected). A child (a map's detokenizer) is released before its parent:
  // embd_detok_create wants the map to outlive the detokenizer, and the registry's callbacks
  // come in no set order.
  own(owner, h, parent = null) {
    h.parent = parent;
    if (parent) (parent.kids ??= new Set()).add(h);
    this.owners ??= typeof FinalizationRegistry === 'function' ? new FinalizationRegistry(release) : null;
    if (this.owners) { this.owners.register(owner, h, h); h.reg = true; }
    return h;
  }
  disown(h) {
    if (h.reg) { this.owners.unregister(h); h.reg = false; }
    release(h);
  }
  // One growing input buffer reused across calls (the module is single-threaded).
  input(n) {
    if (n > this.scratchCap) {
      if (this.scratch) this.free(this.scratch);
      const cap = Math.max(n, this.scratchCap * 2, 4096);
      this.scratch = this.alloc(cap);
      this.scratchCap = cap;
    }
    return this.scratch;
  }
  copyIn(u8) {
    const p = this.input(u8.length);
    this.u8().set(u8, p);
    return p;
  }
  error(rc, base = 0) {
    const dv = new DataView(this.x.memory.buffer);
    const off = Number(dv.getBigUint64(this.errPtr + 8, true));
    const m = new Uint8Array(this.x.memory.buffer, this.errPtr + 16, 160);
    let e = m.indexOf(0);
    if (e < 0) e = 160;
    const msg = DEC.decode(m.subarray(0, e)) || `embd error ${rc}`;
    return new EmbeddingCodecError(msg, RESULT_NAMES[rc] ?? `E${rc}`, off + base, rc);
  }

  // ---- kernels ----
  setIsa(spec) {
    const b = ENC.encode(spec + '\0');
    const p = this.copyIn(b);
    const rc = this.x.embd_isa_set(p);
    if (rc) throw new EmbeddingCodecError(`isa spec ${JSON.stringify(spec)} refused`, RESULT_NAMES[rc], 0, rc);
  }
  activeImpl(kernel) {
    const p = this.x.embd_impl_active(kernel);
    const u = this.u8();
    return DEC.decode(u.subarray(p, u.indexOf(0, p)));
  }
  crc32(data, crc = 0) {
    const u = bytesOf(data);
    const p = this.copyIn(u);
    return this.x.embd_crc32(crc >>> 0, p, u.length) >>> 0;
  }
  base64Decode(s, { url = false, pad = true } = {}) {
    const src = typeof s === 'string' ? ENC.encode(s) : bytesOf(s);
    const flags = (url ? 1 : 0) | (pad ? 0 : 2);
    const max = this.x.embd_base64_decoded_max(src.length);
    const p = this.alloc(src.length + max + 12);
    try {
      this.u8().set(src, p);
      const o = p + src.length;
      const wp = (o + max + 3) & ~3;
      const rc = this.x.embd_base64_decode(p, src.length, flags, o, max, wp, this.errPtr);
      if (rc) throw this.error(rc);
      const n = new Uint32Array(this.x.memory.buffer, wp, 1)[0];
      return this.u8().slice(o, o + n);
    } finally { this.free(p); }
  }
  base64Encode(data, { url = false, pad = true } = {}) {
    const u = bytesOf(data);
    const flags = (url ? 1 : 0) | (pad ? 0 : 2);
    const cap = Math.ceil(u.length / 3) * 4 + 4;
    const p = this.alloc(u.length + cap + 12);
    try {
      this.u8().set(u, p);
      const o = p + u.length;
      const wp = (o + cap + 3) & ~3;
      const rc = this.x.embd_base64_encode(p, u.length, flags, o, cap, wp);
      if (rc) throw new EmbeddingCodecError('base64 encode failed', RESULT_NAMES[rc], 0, rc);
      const n = new Uint32Array(this.x.memory.buffer, wp, 1)[0];
      return DEC.decode(this.u8().subarray(o, o + n));
    } finally { this.free(p); }
  }
  /** Elements of `dtype` (wire bytes, `byteOrder`) -> Float32Array. */
  toF32(bytes, dtype, byteOrder) {
    const u = bytesOf(bytes);
    const dt = dtypeCode(dtype), bo = orderCode(byteOrder);
    const np = this.alloc(4);
    try {
      const rc0 = this.x.embd_dtype_count(dt, u.length, np);
      if (rc0) throw new EmbeddingCodecError(`${u.length} bytes are not a whole number of ${DTYPES[dt]} elements`, RESULT_NAMES[rc0], 0, rc0);
      const n = new Uint32Array(this.x.memory.buffer, np, 1)[0];
      const p = this.alloc(u.length + n * 4 + 4);
      try {
        this.u8().set(u, p);
        const o = (p + u.length + 3) & ~3;
        const rc = this.x.embd_to_f32(o, p, n, dt, bo);
        if (rc) throw new EmbeddingCodecError('conversion failed', RESULT_NAMES[rc], 0, rc);
        return new Float32Array(this.x.memory.buffer.slice(o, o + n * 4));
      } finally { this.free(p); }
    } finally { this.free(np); }
  }
  /** Float32Array -> elements of `dtype` in `byteOrder` (Uint8Array). */
  fromF32(vector, dtype, byteOrder) {
    const v = vector instanceof Float32Array ? vector : Float32Array.from(vector);
    const dt = dtypeCode(dtype), bo = orderCode(byteOrder);
    const bp = this.alloc(4);
    try {
      const rc0 = this.x.embd_dtype_bytes(dt, v.length, bp);
      if (rc0) throw new EmbeddingCodecError(`${v.length} values cannot be ${DTYPES[dt]}`, RESULT_NAMES[rc0], 0, rc0);
      const nb = new Uint32Array(this.x.memory.buffer, bp, 1)[0];
      const p = this.alloc(v.length * 4 + nb + 4);
      try {
        new Float32Array(this.x.memory.buffer, p, v.length).set(v);
        const o = p + v.length * 4;
        const rc = this.x.embd_from_f32(o, p, v.length, dt, bo, this.errPtr);
        if (rc) throw this.error(rc);
        return this.u8().slice(o, o + nb);
      } finally { this.free(p); }
    } finally { this.free(bp); }
  }

  // ---- EMBD frames (the seed codec) ----
  encodeEmbedding(vector, flags = 0, { dtype } = {}) {
    const dt = dtypeCode(dtype);
    const dims = vector.length;
    if ((flags & 0xff) === 0 && dt === 0) {
      // The seed's encoder, byte for byte.
      const buf = new ArrayBuffer(HEADER + dims * 4);
      const view = new DataView(buf);
      view.setUint32(0, MAGIC, false);
      view.setUint8(4, 1);
      view.setUint8(5, 0);
      view.setUint16(6, 0, true);
      view.setUint32(8, dims, true);
      view.setUint32(12, crc12(new Uint8Array(buf), 0), true);
      if (vector instanceof Float32Array && LITTLE) new Float32Array(buf, HEADER, dims).set(vector);
      else for (let i = 0; i < dims; i++) view.setFloat32(HEADER + i * 4, vector[i], true);
      return buf;
    }
    const v = vector instanceof Float32Array ? vector : Float32Array.from(vector);
    if (flags & 1 && !(flags & ~3)) {
      if (this.zlib) return this.encodeZlib(v, flags, dt);
      throw noSyncZlib('encodeEmbedding', 'encodeEmbeddingAsync', 0);
    }
    let rc = this.x.embd_js_frame_size(dims, dt, flags);
    if (rc) throw new EmbeddingCodecError(`cannot size a frame of ${dims} ${DTYPES[dt]} values with flags ${flags}`, RESULT_NAMES[rc], 0, rc);
    const cap = this.out(0);
    const p = this.alloc(dims * 4 + cap);
    try {
      new Float32Array(this.x.memory.buffer, p, dims).set(v);
      rc = this.x.embd_js_frame_encode(p, dims, flags, dt, p + dims * 4, cap);
      if (rc) throw this.error(rc);
      const n = this.out(0);
      return this.x.memory.buffer.slice(p + dims * 4, p + dims * 4 + n);
    } finally { this.free(p); }
  }

  // ---- zlib payloads (frame flag bit 0): one set of checks and one frame layout around
  // two deflaters/inflaters, node:zlib's synchronous calls (this.zlib, in Node) and the
  // platform's CompressionStream / DecompressionStream (asynchronous: the *Async calls,
  // decodeStream and MLEmbedClient use them where node:zlib is absent).

  // flags bit 0 with node:zlib: the values in their dtype (the module's conversion, so the
  // same rounding and refusals), deflated at zlib's default level, the frame around them.
  encodeZlib(v, flags, dt) {
    return this.zlibFrame(v.length, flags, dt, this.zlib.deflateSync(this.zlibRaw(v, dt)));
  }
  /** encodeEmbedding, asynchronous: a zlib payload (flags bit 0) is deflated by
   * CompressionStream('deflate') where node:zlib is absent (browsers). */
  async encodeEmbeddingAsync(vector, flags = 0, opts = {}) {
    if (!(flags & 1) || flags & ~3 || this.zlib) return this.encodeEmbedding(vector, flags, opts);
    const dt = dtypeCode(opts.dtype);
    const v = vector instanceof Float32Array ? vector : Float32Array.from(vector);
    const raw = this.zlibRaw(v, dt);
    const { out, error } = await pump(new CompressionStream('deflate'), [raw], Infinity);
    if (error) throw new EmbeddingCodecError(`CompressionStream: ${error.message}`, 'FRAME_DEFLATE', 0, 19);
    return this.zlibFrame(v.length, flags, dt, out);
  }
  // The values' bytes in their dtype, little-endian.
  zlibRaw(v, dt) {
    if (dt === 0 && !LITTLE) throw new EmbeddingCodecError('big-endian hosts: not supported', 'UNAVAILABLE', 0, 50);
    return dt === 0 ? new Uint8Array(Float32Array.from(v).buffer) : this.fromF32(v, dt, 'little');
  }
  // The frame around a zlib stream z: header, compressed length, z, the CRC trailer (bit 1).
  zlibFrame(dims, flags, dt, z) {
    const tr = flags & 2 ? 4 : 0;
    const out = new Uint8Array(20 + z.length + tr);
    const dv = new DataView(out.buffer);
    dv.setUint32(0, MAGIC, false);
    out[4] = dt === 0 ? 1 : 2;
    out[5] = flags;
    out[6] = dt === 0 ? 0 : dt;
    dv.setUint32(8, dims, true);
    dv.setUint32(12, crc12(out, 0), true);
    dv.setUint32(16, z.length, true);
    out.set(z, 20);
    if (tr) dv.setUint32(20 + z.length, this.crc32(out.subarray(16, 20 + z.length)), true);
    return out.buffer;
  }

  /** decodeEmbedding(buf): {version, flags, dimensions, vector, dtype}. A zero-copy view
   * for a version-1 frame without flags whose payload is 4-byte aligned in its buffer. */
  decodeEmbedding(buf) {
    const u = bytesOf(buf);
    const n = u.length;
    if (n >= HEADER && u[0] === 0x45 && u[1] === 0x4d && u[2] === 0x42 && u[3] === 0x44 &&
        u[4] === 1 && u[5] === 0 && u[6] === 0 && u[7] === 0) {
      const dims = (u[8] | (u[9] << 8) | (u[10] << 16) | (u[11] << 24)) >>> 0;
      const stored = (u[12] | (u[13] << 8) | (u[14] << 16) | (u[15] << 24)) >>> 0;
      if (stored === crc12(u, 0) && HEADER + dims * 4 <= n) {
        const at = u.byteOffset + HEADER;
        const vector = (at & 3) === 0 && LITTLE
          ? new Float32Array(u.buffer, at, dims)
          : new Float32Array(u.buffer.slice(at, at + dims * 4));
        return { version: 1, flags: 0, dimensions: dims, vector, dtype: 'f32' };
      }
    }
    return this.decodeSlow(u);
  }
  decodeSlow(u, base = 0) {
    const p = this.copyIn(u);
    let rc = this.x.embd_js_frame_header(p, u.length, 1);
    if (rc) throw this.error(rc, base);
    const dims = this.out(0), version = this.out(1), flags = this.out(2), dtype = this.out(3);
    if (flags & 1) {
      if (this.zlib) return this.decodeZlib(u, base, dims, version, flags, dtype);
      throw noSyncZlib('decodeEmbedding', 'decodeEmbeddingAsync or decodeStream', base + 5);
    }
    const o = this.alloc(dims * 4 + 4);
    try {
      rc = this.x.embd_js_frame_decode(p, u.length, 1, o, dims);
      if (rc) throw this.error(rc, base);
      const vector = new Float32Array(this.x.memory.buffer.slice(o, o + dims * 4));
      return { version, flags, dimensions: dims, vector, dtype: DTYPES[dtype] };
    } finally { this.free(o); }
  }

  // A checked header's compressed frame at u: the payload CRC, inflate to exactly the
  // values' bytes (zlibStart, an inflater, zlibEnd), then the dtype conversion in the module.
  decodeZlib(u, base, dims, version, flags, dtype) {
    const z = this.zlibStart(u, base, flags, dtype, dims);
    let out, used;
    try {
      const r = this.zlib.inflateSync(z.bytes, { info: true, maxOutputLength: Math.max(z.want, 1) + 1 });
      out = r.buffer;
      used = r.engine.bytesWritten;
    } catch (e) {
      throw new EmbeddingCodecError(`zlib: ${e.message}`, 'FRAME_INFLATE', base + 20, 16);
    }
    return this.zlibEnd(z, out, used, base, dims, version, flags, dtype);
  }
  /** decodeEmbedding, asynchronous: a zlib payload is inflated by
   * DecompressionStream('deflate') where node:zlib is absent (browsers); any other frame
   * is decodeEmbedding's. */
  async decodeEmbeddingAsync(buf, base = 0) {
    const u = bytesOf(buf);
    if (this.zlib || !(u.length > 5 && u[5] & 1)) return this.decodeEmbedding(u);
    const rc = this.x.embd_js_frame_header(this.copyIn(u), u.length, 1);
    if (rc) throw this.error(rc, base);
    const dims = this.out(0), version = this.out(1), flags = this.out(2), dtype = this.out(3);
    const z = this.zlibStart(u, base, flags, dtype, dims);
    const { out, used, error } = await inflateStreams(z.bytes, z.want);
    if (error) throw new EmbeddingCodecError(`zlib: ${error.message}`, 'FRAME_INFLATE', base + 20, 16);
    return this.zlibEnd(z, out, used, base, dims, version, flags, dtype);
  }
  zlibStart(u, base, flags, dtype, dims) {
    const dv = new DataView(u.buffer, u.byteOffset, u.byteLength);
    const clen = dv.getUint32(16, true);
    if (flags & 2) {
      const stored = dv.getUint32(20 + clen, true);
      const got = this.crc32(u.subarray(16, 20 + clen));
      if (stored !== got) throw new EmbeddingCodecError(`payload CRC-32 mismatch: stored 0x${stored.toString(16)}, computed 0x${got.toString(16)}`, 'FRAME_PAYLOAD_CRC', base + 20 + clen, 14);
    }
    return { bytes: u.subarray(20, 20 + clen), clen, want: DT_BYTES(dtype, dims) };
  }
  // out: the inflated bytes (at most want + 1 of them); used: compressed bytes the stream took.
  zlibEnd({ clen, want }, out, used, base, dims, version, flags, dtype) {
    if (out.length !== want) throw new EmbeddingCodecError(`zlib stream inflates to ${out.length > want ? 'more than ' : ''}${Math.min(out.length, want + 1) - (out.length > want ? 1 : 0)} bytes, dims ${dims} need ${want}`, 'FRAME_INFLATE', base + 20, 16);
    if (used !== undefined && used < clen) throw new EmbeddingCodecError(`zlib stream ends after ${used} of its ${clen} compressed bytes`, 'FRAME_COMPRESSED_LENGTH', base + 20 + used, 15);
    const vector = dtype === 0 && LITTLE ? new Float32Array(out.buffer.slice(out.byteOffset, out.byteOffset + want)) : this.toF32(out, dtype, 'little');
    return { version, flags, dimensions: dims, vector, dtype: DTYPES[dtype] };
  }

  /** decodeBatch(buf): a generator of decodeEmbedding results over a batch envelope
   * ([count u32 LE][frames]); frames before a bad one are yielded, then the error. */
  decodeBatch(buf) {
    // The envelope's copy and its iterator stay in the module while frames are to come: the
    // generator owns them (own(), so a dropped one is released) from its first pause with
    // frames to come, and lets them go before it yields the last frame (the end, or a fault
    // after that frame, is read first; the fault is thrown on the next step, as before). So a
    // batch pays the registry (~1 us) once at most, and one of a single frame never.
    const h = held(this.x.embd_js_batch_end, 0);
    const g = this.batchFrames(buf, h, () => this.own(g, h));
    return g;
  }
  *batchFrames(buf, h, own) {
    try {
      const u = bytesOf(buf);
      const copy = this.alloc(u.length || 1);
      this.u8().set(u, copy);
      const st = this.x.embd_js_batch_begin(copy, u.length); // owns the copy from here on
      if (!st) { this.free(copy); throw new EmbeddingCodecError('out of WebAssembly memory', 'OUT_OF_MEMORY', 0, 35); }
      h.ptr = st;
      let rc = this.out(1);
      if (rc) throw this.error(rc);
      const count = this.out(0);
      let seen = 0;
      for (;;) {
        rc = this.x.embd_js_batch_next(st);
        if (rc === 51) return; // EMBD_BATCH_END
        if (rc) throw this.error(rc);
        const off = this.out(1), dims = this.out(2), version = this.out(3), flags = this.out(4),
          dtype = this.out(5);
        let vector;
        const at = u.byteOffset + off + HEADER;
        if (version === 1 && flags === 0 && (at & 3) === 0 && LITTLE) {
          vector = new Float32Array(u.buffer, at, dims);
        } else if (flags & 1) {
          if (!this.zlib) throw noSyncZlib('decodeBatch', 'decodeStream', off + 5);
          vector = this.decodeZlib(u.subarray(off, off + this.out(6)), off, dims, version, flags, dtype).vector;
        } else {
          const o = this.alloc(dims * 4 + 4);
          try {
            rc = this.x.embd_js_batch_frame_decode(st, o, dims);
            if (rc) throw this.error(rc);
            vector = new Float32Array(this.x.memory.buffer.slice(o, o + dims * 4));
          } finally { this.free(o); }
        }
        const last = ++seen === count;
        let fault = null;
        if (last) {
          // The last frame: the end (or the fault after it) is all that is left to read.
          rc = this.x.embd_js_batch_next(st);
          if (rc !== 51) fault = this.error(rc);
          this.disown(h);
        } else if (own) { own(); own = null; }
        yield { version, flags, dimensions: dims, vector, dtype: DTYPES[dtype] };
        if (fault) throw fault;
        if (last) return;
      }
    } finally { this.disown(h); }
  }

  encodeBatch(vectors, flags = 0, opts = {}) {
    const frames = vectors.map((v) => new Uint8Array(this.encodeEmbedding(v, flags, opts)));
    const total = 4 + frames.reduce((a, f) => a + f.length, 0);
    const out = new Uint8Array(total);
    new DataView(out.buffer).setUint32(0, frames.length, true);
    let at = 4;
    for (const f of frames) { out.set(f, at); at += f.length; }
    return out.buffer;
  }

  // ---- Codec session frames: [type u8][payload_len u32 BE][payload] ----
  /** One frame of `type` around `payload` (bytes, or a string for HELLO/READY/ERROR, or an
   * object for HELLO/READY: its JSON, checked by the C parser first). */
  encodeFrame(type, payload = new Uint8Array(0)) {
    if ((type === FRAME.HELLO || type === FRAME.READY) && payload !== null && typeof payload === 'object' &&
        !ArrayBuffer.isView(payload) && !(payload instanceof ArrayBuffer)) {
      payload = JSON.stringify(payload);
      this.parseHandshake(type, payload);
    }
    const u = typeof payload === 'string' ? ENC.encode(payload) : bytesOf(payload, 'payload');
    const p = this.alloc(u.length + 5 + u.length + 16);
    try {
      this.u8().set(u, p);
      const o = p + u.length, wp = (o + 5 + u.length + 3) & ~3;
      const rc = this.x.embd_codec_encode_frame(type >>> 0, p, u.length, o, 5 + u.length, wp);
      if (rc) throw new EmbeddingCodecError(`cannot encode a frame of type ${type} with ${u.length} payload bytes`, RESULT_NAMES[rc], 0, rc);
      return this.u8().slice(o, o + 5 + u.length);
    } finally { this.free(p); }
  }
  /** One TOKENS frame of `ids` (Uint32Array or numbers): 5 + 4n bytes, ids big-endian. */
  encodeTokens(ids) {
    const v = ids instanceof Uint32Array ? ids : Uint32Array.from(ids);
    const n = v.length;
    const p = this.alloc(n * 4 + 5 + n * 4 + 16);
    try {
      new Uint32Array(this.x.memory.buffer, p, n).set(v);
      const o = p + n * 4, wp = (o + 5 + n * 4 + 3) & ~3;
      const rc = this.x.embd_codec_encode_tokens(p, n, o, 5 + n * 4, wp);
      if (rc) throw new EmbeddingCodecError(`cannot encode ${n} token ids`, RESULT_NAMES[rc], 0, rc);
      return this.u8().slice(o, o + 5 + n * 4);
    } finally { this.free(p); }
  }
  /** Every frame of `buf`, checked by the C decoder: [{type, typeName, payload, offset}];
   * payload is a view into buf. A fault throws with its code and byte offset. */
  decodeFrames(buf) {
    const u = bytesOf(buf);
    const p = this.copyIn(u);
    const out = [];
    let pos = 0, index = 0;
    while (pos < u.length) {
      const rc = this.x.embd_js_codec_next(p, u.length, pos, index);
      if (rc) throw this.error(rc);
      const type = this.out(0), off = this.out(1), len = this.out(2);
      const f = { type, typeName: CODEC_TYPES[type] ?? 'unknown', offset: pos, payload: u.subarray(off, off + len) };
      // HELLO/READY: .message, their JSON as an object, read (and checked) when asked for.
      if (type === FRAME.HELLO || type === FRAME.READY) {
        const e = this;
        Object.defineProperty(f, 'message', { enumerable: false, get() { return e.parseHandshake(type, f.payload); } });
      }
      out.push(f);
      pos = this.out(3);
      index = this.out(4);
    }
    return out;
  }
  /** The ids of one TOKENS frame (the whole frame's bytes) as a Uint32Array. */
  decodeTokens(frame) {
    const u = bytesOf(frame);
    const p = this.copyIn(u);
    const cap = Math.max(0, (u.length - 5) >> 2);
    const o = this.alloc(cap * 4 + 4);
    try {
      const rc = this.x.embd_js_codec_tokens(p, u.length, o, cap);
      if (rc) throw this.error(rc);
      const n = this.out(0);
      return new Uint32Array(this.x.memory.buffer.slice(o, o + n * 4));
    } finally { this.free(o); }
  }

  // ---- tokenizer maps and detokenization (embd/tokmap.h) ----
  /** A tokenizer map (schema v0.1, v2 or v2.1) from its JSON text or bytes; `expectedHash`
   * ("sha256:<64 hex>") must be its sha256 when given. The map lives in the module's memory
   * until `map.free()` (or, dropped without it, until the garbage collector takes it). */
  loadTokenizerMap(json, { expectedHash } = {}) {
    const u = typeof json === 'string' ? ENC.encode(json) : bytesOf(json, 'json');
    const h = expectedHash == null ? null : ENC.encode(String(expectedHash) + '\0');
    const p = this.alloc(u.length + (h ? h.length : 0) + 1);
    try {
      this.u8().set(u, p);
      if (h) this.u8().set(h, p + u.length);
      const rc = this.x.embd_js_tokmap_load(p, u.length, h ? p + u.length : 0);
      if (rc) throw this.error(rc);
      return new TokenizerMap(this, this.out(2));
    } finally { this.free(p); }
  }
  /** "sha256:<64 lowercase hex>" of `data` (bytes, or a string as UTF-8): a map's pin. */
  sha256(data) {
    const u = typeof data === 'string' ? ENC.encode(data) : bytesOf(data);
    const p = this.alloc(u.length + 72);
    try {
      this.u8().set(u, p);
      const rc = this.x.embd_tokmap_sha256(p, u.length, p + u.length);
      if (rc) throw new EmbeddingCodecError('sha256 failed', RESULT_NAMES[rc], 0, rc);
      return this.cstr(p + u.length);
    } finally { this.free(p); }
  }
  cstr(p) {
    const u = this.u8();
    return DEC.decode(u.subarray(p, u.indexOf(0, p)));
  }
  /** The JSON of a HELLO (`type` FRAME.HELLO) or READY payload, checked by the C parser
   * (its code and byte offset on a fault), as an object. */
  parseHandshake(type, payload) {
    const u = typeof payload === 'string' ? ENC.encode(payload) : bytesOf(payload, 'payload');
    const p = this.copyIn(u);
    const rc = this.x.embd_js_codec_handshake(p, u.length, type === FRAME.READY ? 1 : 0);
    if (rc) throw this.error(rc);
    return JSON.parse(DEC.decode(u));
  }

  // ---- Codec's protobuf stream mode (stream_format "protobuf" / "protobuf-delta") ----
  /** A reader: feed(bytes) returns the frames completed by those bytes, finish() checks
   * the end; frames {ids, done, finishReason, toolCalls, index, offset, size}. */
  protobufReader({ delta = false, baseId4 = false, maxFrameBytes = 1 << 20 } = {}) {
    return this.modeReader('protobuf', this.x.embd_js_proto_create((delta ? 1 : 0) | (baseId4 ? 2 : 0), maxFrameBytes >>> 0));
  }
  /** The reader of either stream mode (st: glue.c's reader, 0 if its create failed): the
   * same frame queue, feed and finish for protobuf and msgpack. */
  modeReader(name, st) {
    const e = this;
    if (!st) { const rc = this.out(0); throw new EmbeddingCodecError(`${name} reader: ${RESULT_NAMES[rc] ?? rc}`, RESULT_NAMES[rc] ?? `E${rc}`, 0, rc); }
    const h = held(e.x.embd_js_proto_destroy, st);
    const drain = () => {
      const q = e.out(0), len = e.out(1);
      const dv = new DataView(e.x.memory.buffer, q, len);
      const u = new Uint8Array(e.x.memory.buffer, q, len);
      const frames = [];
      let at = 0;
      const pad = (n) => (n + 3) & ~3;
      while (at < len) {
        const n = dv.getUint32(at, true), done = dv.getUint32(at + 4, true), fl = dv.getUint32(at + 8, true), tl = dv.getUint32(at + 12, true);
        const f = { index: dv.getUint32(at + 16, true), offset: dv.getUint32(at + 20, true), size: dv.getUint32(at + 24, true) };
        at += 28;
        f.ids = new Uint32Array(n);
        f.ids.set(new Uint32Array(e.x.memory.buffer, q + at, n));
        at += n * 4;
        f.done = done !== 0;
        f.finishReason = fl === 0xffffffff ? null : DEC.decode(u.subarray(at, at + fl));
        at += fl === 0xffffffff ? 0 : pad(fl);
        f.toolCalls = tl === 0xffffffff ? null : u.slice(at, at + tl);
        at += tl === 0xffffffff ? 0 : pad(tl);
        frames.push(f);
      }
      e.x.embd_js_proto_drain(st);
      return frames;
    };
    const step = (bytes, finish) => {
      if (!h.live) throw new EmbeddingCodecError(`${name} reader already finished`, 'INVALID_ARGUMENT', 0, 1);
      const u = bytes ? bytesOf(bytes) : new Uint8Array(0);
      const p = e.copyIn(u);
      const rc = e.x.embd_js_proto_feed(st, p, u.length, finish ? 1 : 0);
      const frames = drain();
      if (rc) { const err = e.error(rc); err.frames = frames; throw err; }
      return frames;
    };
    const destroy = () => e.disown(h);
    const reader = {
      feed: (bytes) => step(bytes, false),
      finish: () => { try { return step(null, true); } finally { destroy(); } },
      destroy,
    };
    e.own(reader, h);
    return reader;
  }
  /** A whole protobuf-mode stream at once: every frame, or the error. */
  decodeProtobuf(bytes, opts = {}) {
    const r = this.protobufReader(opts);
    try {
      const frames = r.feed(bytes);
      return frames.concat(r.finish());
    } finally { r.destroy(); }
  }
  /** One protobuf-mode frame (4-byte prefix included), as vLLM and libcodec write it;
   * {delta: true, baseId} writes protobuf-delta (base_id in field 5, or 4 with baseId4). */
  encodeProtobuf({ ids = [], done = false, finishReason = null } = {}, { delta = false, baseId = 0, baseId4 = false } = {}) {
    return this.modeEncode('protobuf', this.x.embd_js_proto_encode, ids, done, finishReason,
      (n, fr) => 16 + n * 10 + (fr ? fr.length + 10 : 0), delta ? (baseId4 ? 2 : 0) : -1, baseId);
  }
  // One frame of a stream mode through its C encoder (embd_js_proto_encode /
  // embd_js_msgpack_encode: the same arguments): the ids, the finish reason's UTF-8 and the
  // output in one allocation; capFor(id count, the finish reason's bytes or null) bounds the frame.
  modeEncode(mode, encode, ids, done, finishReason, capFor, deltaArg, baseId) {
    const v = ids instanceof Uint32Array ? ids : Uint32Array.from(ids);
    const fr = finishReason === null || finishReason === undefined ? null : ENC.encode(finishReason);
    const cap = capFor(v.length, fr);
    const p = this.alloc(v.length * 4 + (fr ? fr.length : 0) + cap + 8);
    try {
      new Uint32Array(this.x.memory.buffer, p, v.length).set(v);
      const fp = p + v.length * 4;
      if (fr) this.u8().set(fr, fp);
      const o = fp + (fr ? fr.length : 0);
      const rc = encode(p, v.length, done ? 1 : 0, fp, fr ? fr.length : 0xffffffff, deltaArg, baseId >>> 0, o, cap);
      if (rc) throw new EmbeddingCodecError(`cannot encode this ${mode} frame (${RESULT_NAMES[rc] ?? rc})`, RESULT_NAMES[rc] ?? `E${rc}`, 0, rc);
      return this.u8().slice(o, o + this.out(0));
    } finally { this.free(p); }
  }

  // ---- Codec's msgpack stream mode (stream_format "msgpack" / "msgpack-delta") ----
  // The protobuf mode's API over src/codec/codec_msgpack.c: frames {ids, done,
  // finishReason, toolCalls (the tool_calls value's msgpack bytes, raw), index, offset, size}.
  /** A reader: feed(bytes) returns the frames completed by those bytes, finish() checks the end. */
  msgpackReader({ delta = false, maxFrameBytes = 1 << 20 } = {}) {
    return this.modeReader('msgpack', this.x.embd_js_msgpack_create(delta ? 1 : 0, maxFrameBytes >>> 0));
  }
  /** A whole msgpack-mode stream at once: every frame, or the error. */
  decodeMsgpack(bytes, opts = {}) {
    const r = this.msgpackReader(opts);
    try {
      const frames = r.feed(bytes);
      return frames.concat(r.finish());
    } finally { r.destroy(); }
  }
  /** One msgpack-mode frame as vLLM writes it ({ids, done, finish_reason when given});
   * {delta: true, baseId} writes msgpack-delta (base_id, ids_delta, done, finish_reason). */
  encodeMsgpack({ ids = [], done = false, finishReason = null } = {}, { delta = false, baseId = 0 } = {}) {
    // keys and headers, 9 bytes per id at most (a zigzag delta can need 33 bits), the string
    return this.modeEncode('msgpack', this.x.embd_js_msgpack_encode, ids, done, finishReason,
      (n, fr) => 64 + n * 9 + (fr ? fr.length : 0), delta ? 0 : -1, baseId);
  }

  // ---- OpenAI-compatible bodies ----
  /** decodeOpenAI(body, {dtype, byteOrder, dims}): {matrix, count, dims, model, usage, row(i)} */
  decodeOpenAI(body, { dtype, byteOrder, dims = 0 } = {}) {
    const len = this.textIn(body, 'body');
    const rc = this.x.embd_js_openai_decode(this.scratch, len, dtypeCode(dtype), orderCode(byteOrder), dims >>> 0);
    if (rc) throw this.error(rc);
    const o = this.views().viewOut;
    const vp = o[0], count = o[1], d = o[2];
    const usage = o[5]
      ? { prompt_tokens: o[6] + o[7] * 2 ** 32, total_tokens: o[8] + o[9] * 2 ** 32 }
      : null;
    const model = this.modelName(o[3], o[4]);
    const matrix = this.floatsOut(vp, count * d);
    return openaiResult(matrix, count, d, model, usage);
  }

  /** One base64 embedding string (OpenAI encoding_format "base64") -> Float32Array. */
  decodeBase64Embedding(s, { dtype, byteOrder } = {}) {
    const dt = dtypeCode(dtype), bo = orderCode(byteOrder);
    const len = this.textIn(s, 'string');
    const maxBytes = Math.floor(len / 4) * 3 + 3;
    const cap = dt === 7 || dt === 8 ? maxBytes * 8 : maxBytes;
    // The floats land in a region kept across calls (grown, never freed), then are copied
    // once into the result: no malloc/free per call.
    const o = this.outRegion(cap * 4 + 4);
    const rc = this.x.embd_js_b64_embedding(this.scratch, len, dt, bo, o, cap);
    if (rc) throw this.error(rc);
    return this.floatsOut(o, this.out(0));
  }

  // ---- the hand-off of decodeOpenAI / decodeBase64Embedding ----
  // A string or bytes into the input scratch (this.scratch); returns the byte length. A
  // string is written as UTF-8 by encodeInto straight into module memory (UTF-8 is at
  // most 3 bytes per UTF-16 unit). Node's latin1Write is twice as fast but not exact
  // beyond U+007F, and telling whether a string is ASCII costs more than the difference.
  textIn(x, what) {
    if (typeof x === 'string') {
      const cap = x.length * 3 + 1;
      const p = this.input(cap);
      return ENC.encodeInto(x, this.u8().subarray(p, p + cap)).written;
    }
    const u = bytesOf(x, what);
    this.copyIn(u);
    return u.length;
  }
  // A region for results, kept across calls (the module is single-threaded; the only
  // users copy out of it before returning).
  outRegion(n) {
    if (n > (this.resultCap ?? 0)) {
      if (this.result) this.free(this.result);
      this.result = 0;
      const cap = Math.max(n, (this.resultCap ?? 0) * 2, 4096);
      this.result = this.alloc(cap);
      this.resultCap = cap;
    }
    return this.result;
  }
  // n floats at module address p, copied once into a Float32Array of their own (views of
  // module memory die when it grows). In Node the array's memory is not zeroed first
  // (Buffer.allocUnsafeSlow: its own ArrayBuffer of exactly n * 4 bytes), which was about
  // as much time as the copy for a 100 x 1536 matrix.
  floatsOut(p, n) {
    const v = newFloats(n);
    v.set(new Float32Array(this.x.memory.buffer, p, n));
    return v;
  }
  // The model name, decoded again only when its bytes differ from the last call's.
  modelName(p, n) {
    const u = this.u8();
    const last = this.lastModel;
    if (last && last.bytes.length === n) {
      let same = true;
      for (let i = 0; i < n; i++) if (u[p + i] !== last.bytes[i]) { same = false; break; }
      if (same) return last.name;
    }
    const bytes = u.slice(p, p + n);
    this.lastModel = { bytes, name: DEC.decode(bytes) };
    return this.lastModel.name;
  }
}

// The record of a C object at ptr (0: not made yet) that the glue export `free` releases.
const held = (free, ptr) => ({ free, ptr, live: true, reg: false, parent: null, kids: null });
// Releases a held() record's C object, its children's first; once only.
function release(h) {
  if (!h.live) return;
  h.live = false;
  if (h.kids) for (const k of h.kids) release(k);
  h.parent?.kids.delete(h);
  if (h.ptr) h.free(h.ptr);
}

// A Float32Array of n elements whose contents the caller overwrites at once: Node's
// Buffer.allocUnsafeSlow skips the zeroing; elsewhere a plain Float32Array.
const NodeBuffer = typeof globalThis.Buffer === 'function' && typeof globalThis.Buffer.allocUnsafeSlow === 'function'
  ? globalThis.Buffer : null;
function newFloats(n) {
  if (NodeBuffer && n >= 256) return new Float32Array(NodeBuffer.allocUnsafeSlow(n * 4).buffer, 0, n);
  return new Float32Array(n);
}

/** decodeOpenAI's result (one shape whichever backend decoded). */
function openaiResult(matrix, count, d, model, usage) {
  return {
    matrix, count, dims: d, model, usage,
    row(i) {
      if (!(i >= 0 && i < count)) throw new RangeError(`row ${i} of ${count}`);
      return matrix.subarray(i * d, (i + 1) * d);
    },
    rows() { return Array.from({ length: count }, (_, i) => matrix.subarray(i * d, (i + 1) * d)); },
  };
}

// ---- zlib payloads (frame flag bit 0) ----
// Not in the WebAssembly build (no zlib source on Debian; nothing is downloaded): in Node
// they go through node:zlib (loaded once by load(); its sync calls keep the API sync). In
// browsers only CompressionStream / DecompressionStream exist, which are asynchronous: the
// synchronous calls refuse such frames (UNAVAILABLE, naming the asynchronous call), and
// decodeEmbeddingAsync, encodeEmbeddingAsync, decodeStream and MLEmbedClient take them.
let nodeZlib = null;
async function loadZlib() {
  if (nodeZlib !== null || typeof process === 'undefined' || !process.versions?.node) return;
  try { nodeZlib = await import('node:zlib'); } catch { nodeZlib = false; }
}
function noSyncZlib(call, instead, offset) {
  return new EmbeddingCodecError(`${call}: a zlib payload (flags bit 0) needs zlib, and this platform has no synchronous zlib (no node:zlib): use ${instead}, which use ${call.startsWith('encode') ? 'CompressionStream' : 'DecompressionStream'}`, 'UNAVAILABLE', offset, 50);
}

// Bytes through a CompressionStream / DecompressionStream, written as the pieces given:
// {out (at most cap + 1 bytes: the reading stops there, so a stream that inflates without
// bound costs nothing more), error, took (the bytes of the writes that went through before
// one failed: streamEnd below reads it)}.
async function pump(ts, pieces, cap) {
  const w = ts.writable.getWriter(), r = ts.readable.getReader();
  let took = 0;
  const wrote = (async () => {
    for (const p of pieces) { await w.write(p); took += p.length; }
    await w.close();
  })().catch(() => {}); // errors show on the read side
  const parts = [];
  let n = 0, error = null;
  try {
    for (;;) {
      const { value, done } = await r.read();
      if (done) break;
      parts.push(value);
      n += value.length;
      if (n > cap) { await r.cancel().catch(() => {}); break; }
    }
  } catch (e) { error = e; }
  await wrote;
  const out = new Uint8Array(Math.min(n, cap + 1));
  let at = 0;
  for (const p of parts) { if (at >= out.length) break; const k = Math.min(p.length, out.length - at); out.set(p.subarray(0, k), at); at += k; }
  return { out, error, took };
}

// Adler-32 (RFC 1950), the checksum a zlib stream ends with.
function adler32(u) {
  let a = 1, b = 0;
  for (let i = 0; i < u.length;) {
    const end = Math.min(u.length, i + 3800); // sums stay below 2^31 before the modulo
    for (; i < end; i++) { a += u[i]; b += a; }
    a %= 65521; b %= 65521;
  }
  return ((b << 16) | a) >>> 0;
}

// Inflates zlib stream z expected to give `want` bytes: {out, used, error}, used being the
// compressed bytes the stream took, as node:zlib reports them. DecompressionStream does not
// say where a stream ended, and engines differ on bytes after it (Node 20 ignores them;
// Chromium and Node 24 fail), so the end is found here: a zlib stream ends with the
// Adler-32 of what it inflates to, so it ends at the first u where z[u - 4 .. u) holds that
// checksum and z[0 .. u) inflates on its own (tried only at such places: almost always
// just u = z.length, which the first pass already settled).
// Deno and Bun fail the write that holds bytes after the stream's end and drop what that
// write inflated (so the first pass comes out short): there streamEnd finds the end, and
// the stream is inflated again up to it, as node:zlib would.
async function inflateStreams(z, want) {
  const first = await pump(new DecompressionStream('deflate'), [z], want);
  if (first.out.length < want && first.error) {
    const end = await streamEnd(z, want);
    if (end !== undefined && end >= 6) {
      const p = await pump(new DecompressionStream('deflate'), [z.subarray(0, end)], want);
      // Deno takes a stream cut inside its Adler-32 without a word: the end holds the checksum
      const ok = !p.error && p.out.length === want && new DataView(z.buffer, z.byteOffset + end - 4, 4).getUint32(0) === adler32(p.out);
      if (ok) return { out: p.out, used: end, error: null };
    }
  }
  if (first.out.length !== want) return { out: first.out, used: undefined, error: first.out.length > want ? null : first.error };
  const a = adler32(first.out);
  const a0 = a >>> 24, a1 = (a >>> 16) & 255, a2 = (a >>> 8) & 255, a3 = a & 255;
  for (let u = 6; u <= z.length; u++) {
    if (z[u - 1] !== a3 || z[u - 2] !== a2 || z[u - 3] !== a1 || z[u - 4] !== a0) continue;
    if (u === z.length) { if (!first.error) return { out: first.out, used: u, error: null }; break; }
    const p = await pump(new DecompressionStream('deflate'), [z.subarray(0, u)], want);
    if (!p.error && p.out.length === want) return { out: first.out, used: u, error: null };
  }
  return { out: first.out, used: z.length, error: first.error ?? new Error('the stream does not end with the Adler-32 of its data') };
}
// Where zlib stream z ends on an engine that fails the write holding bytes after the end:
// z is written in up to 64 pieces, the piece that fails holds the end, and that piece is
// split again (log64 of z's length passes, on the error path only). undefined when no
// write fails (the first pass failed for another reason, or at the close).
async function streamEnd(z, cap) {
  let lo = 0, hi = z.length - 1; // the first byte after the stream is z[lo .. hi]
  while (lo < hi) {
    const step = Math.ceil((hi + 1 - lo) / 64);
    const pieces = lo ? [z.subarray(0, lo)] : [];
    for (let s = lo; s <= hi; s += step) pieces.push(z.subarray(s, Math.min(hi + 1, s + step)));
    const r = await pump(new DecompressionStream('deflate'), pieces, cap);
    if (!r.error || r.took > hi || r.took < lo) return undefined;
    hi = Math.min(hi, r.took + step - 1);
    lo = r.took;
  }
  return lo;
}
const DT_BYTES = (dt, dims) => (dt === 0 ? dims * 4 : dt <= 2 ? dims * 2 : dt <= 6 ? dims : dims / 8);

// ---- the optional Node-API addon (js/native/embd_napi.c, scripts/build-napi.sh) ----
// The native library's kernels (AVX2/AVX-512/NEON) behind the same API, for the OpenAI
// decoders only (decodeOpenAIAsync runs off the event loop; the speed gain over the module is
// 1.1-2.1x since the module's SIMD128 work: README); every other function stays on the module. Node only: a browser never sees it.
// The addon reads bytes in place and strings as UTF-8 (so error offsets are the same UTF-8
// byte offsets as here), and throws EmbeddingCodecError through nativeError, which names
// codes with the same table as the module's errors.
const ADDON_DEFAULT = '../dist/embd-napi.node';
const nativeError = (msg, rc, offset) => new EmbeddingCodecError(msg, RESULT_NAMES[rc] ?? `E${rc}`, offset, rc);
const addons = new Map(); // path -> Promise<addon> (a .node loads once per process)
// Filled by the addon's openai(): [count, dims, has_usage, prompt_tokens, total_tokens] and
// [model]; one pair for every instance (calls are synchronous and read them at once).
const NATIVE_META = new Float64Array(5);
const NATIVE_BOX = [''];

async function loadAddon(path) {
  const url = path ? null : new URL(ADDON_DEFAULT, import.meta.url);
  if (url && url.protocol !== 'file:') throw new Error(`embd: the Node-API addon loads from files only (${url})`);
  // A path is the caller's (relative to the working directory), not a package name.
  const file = path ? (await import('node:path')).resolve(path) : (await import('node:url')).fileURLToPath(url);
  if (!addons.has(file)) {
    addons.set(file, (async () => {
      const { createRequire } = await import('node:module');
      return createRequire(import.meta.url)(file);
    })());
  }
  try { return await addons.get(file); } catch (err) { addons.delete(file); throw err; }
}

/** null for WebAssembly, or the addon. 'native' fails loudly; 'auto' falls back to
 * WebAssembly when the addon is not there, does not load, or this is not Node. */
async function pickBackend(backend, path) {
  if (backend === 'wasm') return null;
  if (backend !== 'native' && backend !== 'auto') throw new EmbeddingCodecError(`unknown backend ${JSON.stringify(backend)} (wasm, native, auto)`);
  const isNode = typeof process !== 'undefined' && !!process.versions?.node;
  if (!isNode) {
    if (backend === 'native') throw new Error('embd: the native backend (Node-API addon) needs Node.js');
    return null;
  }
  try {
    const napi = await loadAddon(path);
    napi.setup(nativeError, NATIVE_META);
    return napi;
  } catch (err) {
    if (backend === 'native') throw new Error(`embd: cannot load the Node-API addon ${path ?? ADDON_DEFAULT} (scripts/build-napi.sh builds it): ${err.message}`, { cause: err });
    return null;
  }
}

// The addon reads bytes where they are, for the length of the call. Memory another thread
// may write meanwhile (a SharedArrayBuffer) is copied first: the C decoders assume their
// input holds still, as the module's copy guarantees.
const HAS_SAB = typeof SharedArrayBuffer !== 'undefined';
function nativeInput(x, what) {
  if (typeof x === 'string') return x;
  const u = bytesOf(x, what);
  return HAS_SAB && u.buffer instanceof SharedArrayBuffer ? u.slice() : u;
}

/** The module's Embd with the addon's decoders: decodeOpenAI (and its async form) and
 * decodeBase64Embedding, the functions the bench puts at or above 1.5x the module. */
class EmbdNative extends Embd {
  constructor(instance, simd, napi) {
    super(instance, simd);
    this.napi = napi;
  }
  get backend() { return 'native'; }

  decodeOpenAI(body, { dtype, byteOrder, dims = 0 } = {}) {
    const input = nativeInput(body, 'body');
    const matrix = this.napi.openai(input, dtypeCode(dtype), orderCode(byteOrder), dims >>> 0, NATIVE_BOX);
    const m = NATIVE_META;
    return openaiResult(matrix, m[0], m[1], NATIVE_BOX[0], m[2] ? { prompt_tokens: m[3], total_tokens: m[4] } : null);
  }

  decodeBase64Embedding(s, { dtype, byteOrder } = {}) {
    const dt = dtypeCode(dtype), bo = orderCode(byteOrder);
    return this.napi.base64(nativeInput(s, 'string'), dt, bo);
  }

  /** decodeOpenAI on libuv's thread pool: the event loop runs meanwhile (the body is
   * copied first, so the caller may reuse its buffer at once). */
  async decodeOpenAIAsync(body, { dtype, byteOrder, dims = 0 } = {}) {
    const input = typeof body === 'string' ? body : bytesOf(body, 'body'); // the addon copies it
    const [matrix, count, d, hasUsage, prompt, total, model] =
      await this.napi.openaiAsync(input, dtypeCode(dtype), orderCode(byteOrder), dims >>> 0);
    return openaiResult(matrix, count, d, model, hasUsage ? { prompt_tokens: prompt, total_tokens: total } : null);
  }
}
Embd.prototype.backend = 'wasm';

// ---- decodeOpenAIAsync off the event loop (worker.js) ----
// The module has one thread, so the async form runs decodeOpenAI in a worker that holds its
// own instance of the same compiled Module: one worker per Embd, made on the first call that
// needs it and kept (idle, it holds no event loop open: Node's worker is unref()ed while no
// call is pending), calls answered in order. One worker, not a pool: the decode is one
// parse per body; a pool would multiply the module's memory for bodies that already take
// milliseconds apiece. Bytes are copied once at the call (the caller keeps its buffer and
// may reuse it at once), a string is encoded to UTF-8 at the call, and those bytes are
// transferred (DecodeWorker.input); the result matrix comes back transferred, and the input
// buffer too, kept for the next call. Bodies under workerMinBytes
// (64 KiB) decode on the loop: the hand-off (a message each way, the copy, the wake-ups)
// added 0.1-0.2 ms per call (js/bench.mjs crossover line, 2-core EPYC, Node 24: 1 KiB
// 23 -> 138 us, 31 KiB 71 -> 159 us, 125 KiB 252 -> 350 us; Node 20 alike), more than a
// body under 64 KiB takes to decode on the loop.
// Where no Worker can be made (no Worker, a constructor that throws, a worker that fails
// before it is ready: a CSP, a missing worker.js) every call decodes on the loop and
// workerState says 'unavailable'.
const IS_NODE = typeof process !== 'undefined' && !!process.versions?.node;
const WORKER_MIN_BYTES = 65536;

// A worker behind one interface: post(msg, transfer), ref(), unref(), terminate(); it
// calls onMessage(data) and, once, onDeath(error).
async function spawnWorker(onMessage, onDeath) {
  if (IS_NODE) {
    const url = new URL('./worker.js', import.meta.url);
    const { Worker: NodeWorker } = await import('node:worker_threads');
    // The worker inherits the process's Node options, but not --input-type: a worker started
    // from a file refuses it (ERR_INPUT_TYPE_NOT_ALLOWED under `node --input-type=module -e`).
    // Only then is execArgv given: a list given is validated, and some inherited ones fail
    // that (node --test under Node 24: ERR_WORKER_INVALID_EXEC_ARGV).
    const execArgv = process.execArgv.filter((a, i, v) => !a.startsWith('--input-type') && v[i - 1] !== '--input-type');
    const w = new NodeWorker(url, execArgv.length < process.execArgv.length ? { execArgv } : {});
    w.on('message', onMessage);
    w.on('error', (err) => onDeath(err));
    w.on('exit', (code) => onDeath(new Error(`exited with code ${code}`)));
    return { post: (m, t) => w.postMessage(m, t), ref: () => w.ref(), unref: () => w.unref(), terminate: () => w.terminate() };
  }
  if (typeof Worker !== 'function') return null;
  // written out in the call: bundlers (Vite, webpack 5, Parcel) find worker files by this form
  const w = new Worker(new URL('./worker.js', import.meta.url), { type: 'module' });
  w.onmessage = (ev) => onMessage(ev.data);
  w.onerror = (ev) => { ev.preventDefault?.(); onDeath(new Error(ev.message || 'worker error (the script failed to load or threw)')); };
  w.onmessageerror = () => onDeath(new Error('a message could not be deserialized'));
  return { post: (m, t) => w.postMessage(m, t), ref() {}, unref() {}, terminate: () => w.terminate() };
}

// An error from the worker as the synchronous call would have thrown it.
function revive(o) {
  const err = o.code !== undefined ? new EmbeddingCodecError('', o.code, o.offset, o.result) : new Error();
  err.message = o.message;
  if (o.name) err.name = o.name;
  return err;
}

class DecodeWorker {
  constructor(embd) {
    this.embd = embd;
    this.w = null;            // the worker: set (synchronously) once spawnWorker resolves
    this.starting = false;
    this.ready = false;
    this.waiting = [];        // calls made before the worker said it was ready
    this.pending = new Map(); // id -> call, posted to the worker
    this.nextId = 1;
    this.gen = 0;             // bumped on every stop, so a stopped worker's late events are ignored
    this.spare = null;        // an input ArrayBuffer the worker gave back, for the next call
  }
  // The body as bytes the worker will own (transferred): a string as its UTF-8 (what
  // decodeOpenAI reads; posting the string itself held the loop 1.7-7 ms for 3 MB in Node
  // 20, encoding it 1.3-2.3 ms), bytes copied (the caller keeps its buffer). Into the buffer
  // the last call gave back when it is large enough: a fresh 3 MB ArrayBuffer took the loop
  // ~1.7 ms to copy into, a kept one ~0.5 ms (page faults, zeroing, GC), and encodeInto a
  // kept one ~0.8 ms against encode's 2.4+. (Not u.slice(): for a Node Buffer that is a
  // view of the caller's memory, and transferring it would detach the caller's buffer.)
  input(body, u) {
    const sp = this.spare;
    if (typeof body === 'string') {
      if (sp && sp.byteLength >= body.length) {
        const { read, written } = ENC.encodeInto(body, new Uint8Array(sp));
        if (read === body.length) { this.spare = null; return new Uint8Array(sp, 0, written); }
      }
      return ENC.encode(body);
    }
    if (sp && sp.byteLength >= u.length) {
      this.spare = null;
      const v = new Uint8Array(sp, 0, u.length);
      v.set(u);
      return v;
    }
    return new Uint8Array(u);
  }
  start() {
    const gen = ++this.gen;
    this.starting = true;
    const onDeath = (err) => { if (gen === this.gen) { if (this.ready) this.died(err); else this.unavailable(err); } };
    const onMessage = (m) => { if (gen === this.gen) this.message(m); };
    // Its events come in later tasks, so this.w is set before the first one.
    spawnWorker(onMessage, onDeath).then((w) => {
      if (gen !== this.gen) { w?.terminate(); return; }
      if (w) this.w = w; else this.unavailable(new Error('no Worker in this runtime'));
    }, (err) => { if (gen === this.gen) this.unavailable(err); });
  }
  call(body, opts) {
    return new Promise((resolve, reject) => {
      const job = { body, opts, resolve, reject };
      if (this.ready) this.post(job);
      else {
        this.waiting.push(job);
        if (!this.starting) this.start();
      }
    });
  }
  post(job) {
    const id = this.nextId++;
    if (this.pending.size === 0) this.w.ref();
    this.pending.set(id, job);
    // The bytes go as their ArrayBuffer (input() makes views at offset 0), not as the view:
    // Deno's node:worker_threads copied a posted view element by element (a 20 MB body
    // 7.7 s, its ArrayBuffer 12 ms; the matrix comes back the same way, worker.js).
    this.w.post({ id, body: job.body.buffer, length: job.body.length, ...job.opts }, [job.body.buffer]);
  }
  message(m) {
    if (m.up) { this.w.post({ module: this.embd.module }); return; }
    if (m.failed) { this.unavailable(new Error(m.failed)); return; }
    if (m.ready) {
      this.ready = true;
      const jobs = this.waiting;
      this.waiting = [];
      for (const j of jobs) this.post(j);
      if (!jobs.length) this.w.unref();
      return;
    }
    // the input buffer comes back: kept (the largest, up to 64 MiB) for the next call
    if (m.input && m.input.byteLength <= 2 ** 26 && !(this.spare?.byteLength >= m.input.byteLength)) this.spare = m.input;
    const job = this.pending.get(m.id);
    if (!job) return;
    this.pending.delete(m.id);
    if (this.pending.size === 0) this.w.unref();
    if (m.error) job.reject(revive(m.error));
    else job.resolve(openaiResult(new Float32Array(m.matrix), m.count, m.dims, m.model, m.usage));
  }
  // Stops the worker; posted calls reject with `err`, waiting ones get `waiting(job)`.
  stop(err, waiting) {
    this.gen++;
    const w = this.w;
    this.w = null;
    this.starting = this.ready = false;
    this.spare = null;
    const posted = [...this.pending.values()], queued = this.waiting;
    this.pending = new Map();
    this.waiting = [];
    for (const j of posted) j.reject(err);
    for (const j of queued) waiting(j);
    return Promise.resolve(w?.terminate()).then(() => {});
  }
  // Died after it was ready: its calls reject; the next call starts a new worker.
  died(err) {
    const e = new Error(`embd: the decodeOpenAIAsync worker died: ${err?.message ?? err}`, { cause: err });
    if (this.embd.workerState === 'running') this.embd.workerState = 'idle';
    this.stop(e, (j) => j.reject(e));
  }
  // Never got ready (or no Worker at all): this instance decodes on the loop from now on.
  unavailable(err) {
    const e = this.embd;
    e.workerState = 'unavailable';
    e.workerError = err;
    this.stop(err, (j) => { try { j.resolve(e.decodeOpenAI(j.body, j.opts)); } catch (x) { j.reject(x); } });
  }
}

Object.assign(Embd.prototype, {
  /** decodeOpenAI in a worker (see above); the same result and the same errors. */
  async decodeOpenAIAsync(body, { dtype, byteOrder, dims = 0 } = {}) {
    // the options checked here, as the synchronous call checks them, and passed on normalised
    const opts = { dtype: dtypeCode(dtype), byteOrder: orderCode(byteOrder) ? 'big' : 'little', dims: dims >>> 0 };
    const text = typeof body === 'string';
    const u = text ? null : bytesOf(body, 'body');
    const n = text ? body.length : u.length;
    if (this.workerState === 'off' || this.workerState === 'unavailable' || n < this.workerMinBytes)
      return this.decodeOpenAI(body, opts);
    this.decodeWorker ??= new DecodeWorker(this);
    this.workerState = 'running';
    return this.decodeWorker.call(this.decodeWorker.input(body, u), opts);
  },
  /** Stops decodeOpenAIAsync's worker (calls in flight reject); a later call starts another. */
  close() {
    if (!this.decodeWorker) return Promise.resolve();
    if (this.workerState === 'running') this.workerState = 'idle';
    const err = new Error('embd: closed while decodeOpenAIAsync was running');
    return this.decodeWorker.stop(err, (j) => j.reject(err));
  },
  workerState: 'idle',
  workerMinBytes: WORKER_MIN_BYTES,
});

// ---- the default instance and module-level API ----
let current = null;
const modules = new Map();

async function compileVariant(simd, source) {
  if (source instanceof WebAssembly.Module) return source;
  if (source) return WebAssembly.compile(source);
  const key = simd ? 'simd128' : 'scalar';
  if (!modules.has(key)) modules.set(key, WebAssembly.compile(await loadBytes(`embd-${key}.wasm`)));
  return modules.get(key);
}

const KINDS = [null, 'text', 'byte', 'special', 'bytes'];

/** A loaded tokenizer map (Embd.loadTokenizerMap). */
export class TokenizerMap {
  constructor(embd, ptr) {
    this.e = embd;
    this.ptr = ptr;
    this.h = embd.own(this, held(embd.x.embd_js_tokmap_free, ptr));
  }
  live() {
    if (!this.h.live) throw new EmbeddingCodecError('tokenizer map already freed', 'INVALID_ARGUMENT', 0, 1);
    return this.ptr;
  }
  get hash() { return this.e.cstr(this.e.x.embd_tokmap_hash(this.live())); }
  get id() { return this.e.cstr(this.e.x.embd_tokmap_id(this.live())); }
  get version() { return this.e.cstr(this.e.x.embd_tokmap_version(this.live())); }
  get schema() { return this.e.cstr(this.e.x.embd_tokmap_schema(this.live())); }
  get vocabSize() { return Number(this.e.x.embd_tokmap_vocab_size(this.live())); }
  get tokenCount() { return this.e.x.embd_tokmap_token_count(this.live()) >>> 0; }
  get specialCount() { return this.e.x.embd_tokmap_special_count(this.live()) >>> 0; }
  /** What `id` stands for: {bytes, kind: 'text' | 'byte' | 'special' | 'bytes'}, or null
   * when the map does not know it. */
  lookup(id) {
    const rc = this.e.x.embd_js_tokmap_lookup(this.live(), id >>> 0);
    if (rc === 49) return null;
    if (rc) throw new EmbeddingCodecError(`lookup of ${id}`, RESULT_NAMES[rc], 0, rc);
    const p = this.e.out(2), n = this.e.out(3);
    return { bytes: this.e.u8().slice(p, p + n), kind: KINDS[this.e.out(4)] };
  }
  /** A detokenizer for one token stream: feed(ids) -> text, finish() -> text.
   * skipSpecial: specials give no text; replaceUnknown: an unknown id is U+FFFD instead of
   * an UNKNOWN_TOKEN error (offset: its index in the feed); partial: an incomplete UTF-8
   * sequence at the end of a feed waits for the next one (streaming). */
  detokenizer({ skipSpecial = false, replaceUnknown = false, partial = true } = {}) {
    return new Detokenizer(this, (skipSpecial ? 1 : 0) | (partial ? 2 : 0) | (replaceUnknown ? 4 : 0));
  }
  /** The text of a whole token sequence. */
  detokenize(ids, { skipSpecial = false, replaceUnknown = false } = {}) {
    // freed before this returns: no registry (~1 us of a ~2.5 us call)
    const d = new Detokenizer(this, (skipSpecial ? 1 : 0) | (replaceUnknown ? 4 : 0), false);
    try { return d.feed(ids) + d.finish(); } finally { d.free(); }
  }
  /** Releases the map now, and its detokenizers first (the garbage collector would, later). */
  free() { this.e.disown(this.h); }
}

/** One stream's detokenizer (TokenizerMap.detokenizer). It keeps its map alive, and
 * map.free() frees it first: the C map must outlive its detokenizers. */
export class Detokenizer {
  constructor(map, flags, owned = true) {
    this.map = map;
    this.e = map.e;
    const rc = this.e.x.embd_js_detok_create(map.live(), flags);
    if (rc) throw new EmbeddingCodecError('detokenizer', RESULT_NAMES[rc], 0, rc);
    this.ptr = this.e.out(2);
    this.h = held(this.e.x.embd_js_detok_destroy, this.ptr);
    if (owned) this.e.own(this, this.h, map.h);
  }
  live() {
    this.map.live();
    if (!this.h.live) throw new EmbeddingCodecError('detokenizer already freed', 'INVALID_ARGUMENT', 0, 1);
    return this.ptr;
  }
  run(ids, finish) {
    const d = this.live();
    const v = finish ? new Uint32Array(0) : ids instanceof Uint32Array ? ids : Uint32Array.from(ids);
    const cap = this.e.x.embd_detok_bound(this.map.ptr, v.length) >>> 0;
    const p = this.e.alloc(v.length * 4 + cap + 4);
    try {
      new Uint32Array(this.e.x.memory.buffer, p, v.length).set(v);
      const o = p + v.length * 4;
      const rc = this.e.x.embd_js_detok_feed(d, p, v.length, o, cap, finish ? 1 : 0);
      if (rc) throw this.e.error(rc);
      return DEC.decode(this.e.u8().subarray(o, o + this.e.out(2)));
    } finally { this.e.free(p); }
  }
  /** The text of `ids` (Uint32Array or numbers); all or nothing on an error. */
  feed(ids) { return this.run(ids, false); }
  /** End of the stream: held-back bytes (an incomplete sequence is U+FFFD); then reset. */
  finish() { return this.run(null, true); }
  reset() { this.e.x.embd_detok_reset(this.live()); }
  get pending() { return this.e.x.embd_detok_pending(this.live()) >>> 0; }
  free() { this.e.disown(this.h); }
}

/** Instantiates a module: {simd: true|false|'auto', module: WebAssembly.Module | bytes,
 * backend: 'wasm' (default) | 'native' | 'auto', addon: path of the Node-API addon,
 * zlib: 'auto' (node:zlib where it exists) | 'streams' (Compression/DecompressionStream
 * only, as in a browser), worker: false (decodeOpenAIAsync decodes on the event loop)}. */
export async function load({ simd = 'auto', module, backend = 'wasm', addon, zlib = 'auto', worker = true } = {}) {
  const useSimd = simd === 'auto' ? simdSupported() : !!simd;
  const mod = await compileVariant(useSimd, module);
  await loadZlib();
  const napi = await pickBackend(backend, addon);
  let inst;
  const imports = { wasi_snapshot_preview1: wasiStubs(() => inst.exports.memory) };
  inst = await WebAssembly.instantiate(mod, imports);
  const e = napi ? new EmbdNative(inst, useSimd, napi) : new Embd(inst, useSimd);
  e.zlib = zlib === 'streams' ? null : nodeZlib || null;
  e.module = mod; // decodeOpenAIAsync's worker instantiates the same compiled module
  if (!worker) e.workerState = 'off';
  // A module handed in says itself which one it is: the SIMD128 build runs wasm-simd128 rows.
  if (module) e.simd = e.activeImpl(2) === 'wasm-simd128';
  return e;
}

/** Loads the default instance once (later calls return it). */
export async function init(opts = {}) {
  if (!current || opts.module || opts.simd !== undefined || opts.backend !== undefined || opts.zlib !== undefined || opts.worker !== undefined) current = await load(opts);
  return current;
}
function cur() {
  if (!current) throw new Error('embd: call `await init()` first');
  return current;
}

export const encodeEmbedding = (v, flags, opts) => cur().encodeEmbedding(v, flags, opts);
export const decodeEmbedding = (buf) => cur().decodeEmbedding(buf);
export const decodeEmbeddingAsync = (buf) => cur().decodeEmbeddingAsync(buf);
export const encodeEmbeddingAsync = (v, flags, opts) => cur().encodeEmbeddingAsync(v, flags, opts);
export const decodeBatch = (buf) => cur().decodeBatch(buf);
export const encodeBatch = (vs, flags, opts) => cur().encodeBatch(vs, flags, opts);
/** Node Buffers from a pool: the bytes at their own offset (no .buffer mistakes). */
export const decodeEmbeddingFromBuffer = (b) => cur().decodeEmbedding(new Uint8Array(b.buffer, b.byteOffset, b.byteLength));
export const decodeBatchFromBuffer = (b) => cur().decodeBatch(new Uint8Array(b.buffer, b.byteOffset, b.byteLength));
export const decodeOpenAI = (body, opts) => cur().decodeOpenAI(body, opts);
export const decodeBase64Embedding = (s, opts) => cur().decodeBase64Embedding(s, opts);
export const decodeOpenAIAsync = (body, opts) => cur().decodeOpenAIAsync(body, opts);
export const encodeFrame = (type, payload) => cur().encodeFrame(type, payload);
export const encodeTokens = (ids) => cur().encodeTokens(ids);
export const decodeFrames = (buf) => cur().decodeFrames(buf);
export const decodeTokens = (frame) => cur().decodeTokens(frame);
export const loadTokenizerMap = (json, opts) => cur().loadTokenizerMap(json, opts);
export const sha256 = (data) => cur().sha256(data);
export const parseHandshake = (type, payload) => cur().parseHandshake(type, payload);
export const protobufReader = (opts) => cur().protobufReader(opts);
export const decodeProtobuf = (bytes, opts) => cur().decodeProtobuf(bytes, opts);
export const encodeProtobuf = (frame, opts) => cur().encodeProtobuf(frame, opts);
export const msgpackReader = (opts) => cur().msgpackReader(opts);
export const decodeMsgpack = (bytes, opts) => cur().decodeMsgpack(bytes, opts);
export const encodeMsgpack = (frame, opts) => cur().encodeMsgpack(frame, opts);
export const crc32 = (data, crc) => cur().crc32(data, crc);
export const base64Decode = (s, opts) => cur().base64Decode(s, opts);
export const base64Encode = (d, opts) => cur().base64Encode(d, opts);
export const toFloat32 = (bytes, dtype, byteOrder) => cur().toF32(bytes, dtype, byteOrder);
export const fromFloat32 = (v, dtype, byteOrder) => cur().fromF32(v, dtype, byteOrder);
export const kernels = {
  crc32, base64Decode, base64Encode, toFloat32, fromFloat32,
  setIsa: (spec) => cur().setIsa(spec),
  active: (k) => cur().activeImpl(k),
  get simd() { return cur().simd; },
};
export const KERNEL = { CRC32: 0, BSWAP32: 1, BASE64_DECODE: 2, BASE64_ENCODE: 3, CONVERT: 4, CONVERT_ENCODE: 5 };

export { decodeStream, decodeFrameStream, decodeProtobufStream, decodeMsgpackStream, MLEmbedClient } from './stream.js';
