// Shared by the tests: the two modules, and oracles written from the formats' definitions
// (DataView reads), never from embd.
import { load } from '../src/embd.js';

export const simd = await load({ simd: true });
export const scalar = await load({ simd: false });

export function bitsOf(f32) { return new Uint32Array(f32.buffer, f32.byteOffset, f32.length); }
export function sameBits(a, b) {
  if (a.length !== b.length) return `length ${a.length} vs ${b.length}`;
  const x = bitsOf(a), y = bitsOf(b);
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return `element ${i}: 0x${x[i].toString(16)} vs 0x${y[i].toString(16)}`;
  return null;
}
export function f32FromBits(bits) { const f = new Float32Array(bits.length); new Uint32Array(f.buffer).set(bits); return f; }

// decodeOpenAI bodies that fail: [body, code, the byte offset where it is pinned]. Offsets
// count UTF-8 bytes (a non-ASCII model name before the fault moves it by its UTF-8 length).
// openai.test.mjs runs them on both modules, addon-native.test.mjs on the addon against both.
export const OPENAI_ERRORS = [
  ['{"data":[{"index":0,"embedding":[1,2]}],"model":"m"', 'OPENAI_JSON', 51],
  ['{"data":[{"index":0,"embedding":[1,x]}]}', 'OPENAI_JSON', 35],
  ['{"data":[{"index":0,"embedding":"AAAA*AAAAAAAAAAA"}]}', 'BASE64_CHAR', 37],
  ['{"data":[{"index":0,"embedding":"AAA"}]}', 'BASE64_LENGTH'],
  ['{"data":[{"index":0,"embedding":"AAA="}]}', 'BASE64_F32_LENGTH'],
  ['{"data":[{"index":0,"embedding":[1,2]},{"index":1,"embedding":[1]}]}', 'OPENAI_DIMS'],
  ['{"data":[{"index":0,"embedding":[1]},{"index":0,"embedding":[1]}]}', 'OPENAI_INDEX'],
  ['{"data":[{"index":0,"embedding":null}]}', 'OPENAI_SHAPE'],
  ['{"data":[{"index":0,"embedding":[1e39]}]}', 'OPENAI_SHAPE'],
  ['{"nodata":1}', 'OPENAI_SHAPE'],
  ['', 'OPENAI_JSON', 0],
  ['{"model":"\u00e9","data":[{"index":0,"embedding":[1,x]}]}', 'OPENAI_JSON', '{"model":"\u00e9","data":[{"index":0,"embedding":[1,'.length + 1],
  ['{"model":"\ud800","data":[{"index":0,"embedding":[1,x]}]}', 'OPENAI_JSON'], // a lone surrogate: U+FFFD (3 bytes) on every path
  ['{"data":[{"index":0,"embedding":[1]}],"model":"m"}\u0000', 'OPENAI_JSON'],
];

export function rng(seed) {
  let s = seed >>> 0 || 1;
  return () => { s ^= s << 13; s >>>= 0; s ^= s >>> 17; s ^= s << 5; s >>>= 0; return s; };
}
export function randomBytes(n, seed) { const r = rng(seed); const u = new Uint8Array(n); for (let i = 0; i < n; i++) u[i] = r() & 0xff; return u; }
// OpenAI bodies of float32 rows (the module, addon and async tests). float32 values printed
// the shortest way: JSON.parse then Math.fround gives them back exactly (one rounding: the
// text is the float's own), so JSON.parse is the oracle.
export function floatBody(rows, { model = 'text-embedding-3-small', reverse = false } = {}) {
  const data = rows.map((r, i) => `{"object":"embedding","index":${i},"embedding":[${Array.from(r, (x) => JSON.stringify(x)).join(',')}]}`);
  if (reverse) data.reverse();
  return `{"object":"list","data":[${data.join(',')}],"model":"${model}","usage":{"prompt_tokens":7,"total_tokens":7}}`;
}
export function b64Body(rows, dtypeBytes = (r) => Buffer.from(r.buffer, r.byteOffset, r.byteLength)) {
  const data = rows.map((r, i) => `{"object":"embedding","index":${i},"embedding":"${dtypeBytes(r).toString('base64')}"}`);
  return `{"object":"list","data":[${data.join(',')}],"model":"m","usage":{"prompt_tokens":1,"total_tokens":2}}`;
}
export function randomRows(count, dims, seed) {
  const r = rng(seed);
  return Array.from({ length: count }, () => Float32Array.from({ length: dims }, () => ((r() / 2 ** 32) - 0.5) * 0.2));
}

// float32 bits of one element of each dtype, from its definition.
function f16bits(h) {
  const s = (h & 0x8000) << 16, e = (h >> 10) & 0x1f, m = h & 0x3ff;
  if (e === 0x1f) return (s | 0x7f800000 | (m << 13) | (m ? 0x400000 : 0)) >>> 0; // NaNs quieted
  const dv = new DataView(new ArrayBuffer(4));
  if (e === 0) { dv.setFloat32(0, (s ? -1 : 1) * m * 2 ** -24); return dv.getUint32(0); }
  return (s | ((e + 112) << 23) | (m << 13)) >>> 0;
}
function e4m3(b) {
  const s = b & 0x80 ? -1 : 1, e = (b >> 3) & 0xf, m = b & 7;
  if (e === 15 && m === 7) return { bits: (b & 0x80 ? 0xffc00000 : 0x7fc00000) >>> 0 };
  return s * (e === 0 ? m * 2 ** -9 : (1 + m / 8) * 2 ** (e - 7));
}
function e5m2(b) { return f16bits(b << 8); }
/** The oracle: DataView reads of `bytes` as `dtype` in `order` -> Float32Array. */
export function oracleToF32(bytes, dtype, order = 'little') {
  const le = order === 'little';
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out = [];
  const pushBits = (b) => out.push({ bits: b >>> 0 });
  const pushNum = (x) => out.push({ num: x });
  switch (dtype) {
    case 'f32': for (let i = 0; i + 4 <= bytes.length; i += 4) pushBits(dv.getUint32(i, le)); break;
    case 'f16': for (let i = 0; i + 2 <= bytes.length; i += 2) pushBits(f16bits(dv.getUint16(i, le))); break;
    case 'bf16': for (let i = 0; i + 2 <= bytes.length; i += 2) pushBits(dv.getUint16(i, le) << 16); break;
    case 'fp8_e4m3': for (let i = 0; i < bytes.length; i++) { const x = e4m3(dv.getUint8(i)); if (typeof x === 'object') pushBits(x.bits); else pushNum(x); } break;
    case 'fp8_e5m2': for (let i = 0; i < bytes.length; i++) pushBits(e5m2(dv.getUint8(i))); break;
    case 'int8': for (let i = 0; i < bytes.length; i++) pushNum(dv.getInt8(i)); break;
    case 'uint8': for (let i = 0; i < bytes.length; i++) pushNum(dv.getUint8(i)); break;
    // Cohere's signed form: the packed byte XOR 0x80 (int8 "offset binary").
    case 'binary': for (let i = 0; i < bytes.length; i++) for (let k = 7; k >= 0; k--) pushNum(((dv.getUint8(i) ^ 0x80) >> k) & 1 ? 1 : -1); break;
    case 'ubinary': for (let i = 0; i < bytes.length; i++) for (let k = 7; k >= 0; k--) pushNum((dv.getUint8(i) >> k) & 1); break;
    default: throw new Error(dtype);
  }
  const f = new Float32Array(out.length);
  const u = bitsOf(f);
  out.forEach((o, i) => { if ('bits' in o) u[i] = o.bits; else f[i] = o.num; });
  return f;
}
