// The seed's TypeScript EMBD codec (/work/shared/seeds/000_0a93820dd5e31fc4.txt,
// src/codec/embeddingCodec.ts), transcribed to plain Node.js: encodeEmbedding,
// crc32, decodeEmbedding, decodeBatch and EmbeddingCodecError, behaviour kept as it is
// (only the TypeScript types dropped), plus the interop driver's two steps:
//
//   node seed_codec.mjs gen <dir>    write the test vectors: manifest.txt, <name>.f32 (the
//                                    expected float32 bits, LE), <name>.f64 for the number[]
//                                    cases, and <name>.seed.frame (encodeEmbedding's frame)
//   node seed_codec.mjs check <dir>  decode every <name>.embd.frame (written by
//                                    embd_interop) with decodeEmbedding and decodeBatch;
//                                    the float bits must match <name>.f32 and the frame
//                                    bytes the seed encoder's frame for the same input;
//                                    then every version-2 dtype frame and batch in
//                                    v2manifest.txt must be refused by the seed decoder
//                                    ("Unsupported codec version: 2")
//
// No npm packages. Exit status 0 on success, 1 on a mismatch.
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

// ---- the seed codec, transcribed --------------------------------------------------------

const MAGIC = 0x454d4244; // "EMBD" in ASCII, big-endian (EMBedding Data)
const CODEC_VERSION = 1;
const HEADER_SIZE = 16;

/**
 * Encodes an embedding vector into a compact binary frame.
 * Header layout (16 bytes):
 *   [0-3]  magic number  (uint32 BE, 0x454D4244 = "EMBD")
 *   [4]    version       (uint8)
 *   [5]    flags         (uint8, reserved)
 *   [6-7]  padding       (uint16, zeroed)
 *   [8-11] dimensions    (uint32 LE)
 *   [12-15] crc32        (uint32 LE, over bytes 0-11)
 *
 * Payload: dimensions * 4 bytes of little-endian float32 values.
 */
export function encodeEmbedding(vector, flags = 0) {
  const dims = vector.length;
  const buf = new ArrayBuffer(HEADER_SIZE + dims * 4);
  const view = new DataView(buf);

  // Write header fields
  view.setUint32(0, MAGIC, false);          // big-endian magic
  view.setUint8(4, CODEC_VERSION);
  view.setUint8(5, flags);
  view.setUint16(6, 0, true);              // padding
  view.setUint32(8, dims, true);           // little-endian dimension count

  // Compute CRC32 over header bytes 0-11
  const headerBytes = new Uint8Array(buf, 0, 12);
  view.setUint32(12, crc32(headerBytes), true);

  // Write float32 payload
  const payload = new Float32Array(buf, HEADER_SIZE, dims);
  if (vector instanceof Float32Array) {
    payload.set(vector);
  } else {
    for (let i = 0; i < dims; i++) {
      view.setFloat32(HEADER_SIZE + i * 4, vector[i], true);
    }
  }

  return buf;
}

/** Minimal CRC32 implementation (IEEE polynomial) used for header integrity. */
export function crc32(data) {
  let crc = 0xffffffff;
  for (const byte of data) {
    crc ^= byte;
    for (let j = 0; j < 8; j++) {
      crc = (crc & 1) ? (crc >>> 1) ^ 0xedb88320 : crc >>> 1;
    }
  }
  return (crc ^ 0xffffffff) >>> 0;
}

export class EmbeddingCodecError extends Error {
  constructor(message) {
    super(`[EmbeddingCodec] ${message}`);
    this.name = 'EmbeddingCodecError';
  }
}

export function decodeEmbedding(buf) {
  if (buf.byteLength < HEADER_SIZE) {
    throw new EmbeddingCodecError(
      `Buffer too small: expected at least ${HEADER_SIZE} bytes, got ${buf.byteLength}`
    );
  }

  const view = new DataView(buf);

  const magic = view.getUint32(0, false); // big-endian
  if (magic !== MAGIC) {
    throw new EmbeddingCodecError(
      `Invalid magic: expected 0x${MAGIC.toString(16)}, got 0x${magic.toString(16)}`
    );
  }

  const version = view.getUint8(4);
  if (version !== CODEC_VERSION) {
    throw new EmbeddingCodecError(
      `Unsupported codec version: ${version} (expected ${CODEC_VERSION})`
    );
  }

  const flags = view.getUint8(5);
  const dims = view.getUint32(8, true); // little-endian

  // Verify header CRC32
  const storedCrc = view.getUint32(12, true);
  const computedCrc = crc32(new Uint8Array(buf, 0, 12));
  if (storedCrc !== computedCrc) {
    throw new EmbeddingCodecError(
      `Header CRC32 mismatch: stored=0x${storedCrc.toString(16)}, ` +
      `computed=0x${computedCrc.toString(16)}`
    );
  }

  const expectedSize = HEADER_SIZE + dims * 4;
  if (buf.byteLength < expectedSize) {
    throw new EmbeddingCodecError(
      `Payload truncated: need ${expectedSize} bytes for ${dims} dims, ` +
      `got ${buf.byteLength}`
    );
  }

  // Zero-copy view over the float32 payload region
  const vector = new Float32Array(buf, HEADER_SIZE, dims);

  return { version, flags, dimensions: dims, vector };
}

/**
 * Decodes a batch envelope containing multiple sequential embedding frames.
 * Batch layout: [4-byte frame count (uint32 LE)] [frame_0] [frame_1] ... [frame_N-1]
 */
export function* decodeBatch(buf) {
  if (buf.byteLength < 4) {
    throw new EmbeddingCodecError('Batch buffer too small to contain count prefix');
  }
  const outerView = new DataView(buf);
  const frameCount = outerView.getUint32(0, true);
  let offset = 4;

  for (let i = 0; i < frameCount; i++) {
    if (offset + HEADER_SIZE > buf.byteLength) {
      throw new EmbeddingCodecError(
        `Batch frame ${i}: header starts at offset ${offset} but buffer ends at ${buf.byteLength}`
      );
    }
    const frameView = new DataView(buf, offset);
    const dims = frameView.getUint32(8, true);
    const frameSize = HEADER_SIZE + dims * 4;
    const frameBuffer = buf.slice(offset, offset + frameSize);
    yield decodeEmbedding(frameBuffer);
    offset += frameSize;
  }
}

// ---- the interop driver -------------------------------------------------------------------

// Deterministic xorshift32, so every run writes the same vectors.
function rng(seed) {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13; s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5; s >>>= 0;
    return s;
  };
}

// A Float32Array holding exactly these bit patterns (written through a Uint32Array over the
// same memory, so NaN payloads and signalling NaNs are never touched by a JS number).
function f32FromBits(bits) {
  const f = new Float32Array(bits.length);
  new Uint32Array(f.buffer).set(bits);
  return f;
}

function f32Cases() {
  const cases = [];
  cases.push(['dims0', []]);
  cases.push(['dims1_negzero', [0x80000000]]);
  cases.push(['dims3_inf_subnormal', [0x7f800000, 0xff800000, 0x00000001]]);
  cases.push(['dims1_one', [0x3f800000]]);
  cases.push(['specials', [
    0x00000000, 0x80000000,             // +0, -0
    0x7f800000, 0xff800000,             // +inf, -inf
    0x00000001, 0x80000001,             // smallest subnormals
    0x007fffff, 0x807fffff,             // largest subnormals
    0x00800000, 0x7f7fffff, 0xff7fffff, // FLT_MIN, +-FLT_MAX
    0x7fc00000, 0xffc00000,             // quiet NaNs
    0x7f800001, 0xff800001, 0x7fbfffff, // signalling NaNs
    0x7fc12345, 0xffffffff, 0x7fffffff, // NaN payloads
    0x3f800000, 0xbf800000, 0x3eaaaaab, // 1, -1, 1/3
  ]]);
  const r = rng(0x454d4244);
  for (const [name, n] of [['rand1536', 1536], ['rand7', 7], ['rand4099', 4099]]) {
    const b = [];
    for (let i = 0; i < n; i++) b.push(r());
    cases.push([name, b]);
  }
  // Random bits restricted to NaN and subnormal encodings.
  const ns = [];
  for (let i = 0; i < 256; i++) {
    const x = r();
    ns.push(i & 1 ? ((x & 0x807fffff) | 0x7f800001) >>> 0 : (x & 0x807fffff) >>> 0);
  }
  cases.push(['nan_subnormal256', ns]);
  return cases.map(([name, bits]) => [name, f32FromBits(bits)]);
}

// number[] inputs: the encoder's DataView.setFloat32 path (round to nearest even).
// No NaN here: setFloat32 canonicalizes NaN, which says nothing about the format.
function f64Cases() {
  const v = [0, -0, 1, -1, 0.1, 1 / 3, Math.PI, 1e-45, 7e-46, 1e-46, 1.5e-45,
             1 + 2 ** -24, 1 + 3 * 2 ** -24, 3.4028234663852886e38, 3.4028235677973366e38,
             3.4028235677973362e38, -1e39, Infinity, -Infinity, 1.1754942e-38, 123456789.123];
  const r = rng(7);
  for (let i = 0; i < 64; i++) {
    // doubles across a wide exponent range
    const m = r() / 4294967296 + r() / 4294967296 / 4294967296;
    v.push((r() & 1 ? -1 : 1) * m * 2 ** ((r() % 300) - 150));
  }
  return [['f64_mixed', v]];
}

function leBytesOfF32(f) {
  const out = new Uint8Array(f.length * 4);
  const dv = new DataView(out.buffer);
  const u = new Uint32Array(f.buffer, f.byteOffset, f.length);
  for (let i = 0; i < u.length; i++) dv.setUint32(i * 4, u[i], true);
  return out;
}

// An ArrayBuffer of its own (never a pooled Buffer's .buffer: see the seed's warning).
function readAB(path) {
  const b = readFileSync(path);
  return b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength);
}

function gen(dir) {
  mkdirSync(dir, { recursive: true });
  const manifest = [];
  for (const [name, f] of f32Cases()) {
    writeFileSync(join(dir, `${name}.f32`), leBytesOfF32(f));
    writeFileSync(join(dir, `${name}.seed.frame`), new Uint8Array(encodeEmbedding(f)));
    manifest.push(`${name} f32`);
  }
  for (const [name, v] of f64Cases()) {
    const d = new Uint8Array(v.length * 8);
    const dv = new DataView(d.buffer);
    v.forEach((x, i) => dv.setFloat64(i * 8, x, true));
    writeFileSync(join(dir, `${name}.f64`), d);
    const frame = encodeEmbedding(v);
    writeFileSync(join(dir, `${name}.seed.frame`), new Uint8Array(frame));
    // The expected bits: what the seed's own setFloat32 made of the doubles.
    writeFileSync(join(dir, `${name}.f32`), new Uint8Array(frame, HEADER_SIZE));
    manifest.push(`${name} f64`);
  }
  writeFileSync(join(dir, 'manifest.txt'), manifest.join('\n') + '\n');
  console.log(`seed_codec gen: ${manifest.length} cases in ${dir}`);
}

function hex(u8, at) {
  return Array.from(u8.subarray(at, at + 8), (b) => b.toString(16).padStart(2, '0')).join(' ');
}

// Compares decoded float bits (raw bytes of the Float32Array view, host order as the seed
// returns them) with the expected LE bytes. Returns an error string or null.
function compareBits(vec, expectLE) {
  const got = leBytesOfF32(vec);
  if (got.length !== expectLE.length) return `${vec.length} dims decoded, expected ${expectLE.length / 4}`;
  for (let i = 0; i < got.length; i++) {
    if (got[i] !== expectLE[i]) {
      const k = i >> 2;
      return `value ${k}: bytes ${hex(got, k * 4).slice(0, 11)}, expected ${hex(expectLE, k * 4).slice(0, 11)}`;
    }
  }
  return null;
}

function check(dir) {
  const lines = readFileSync(join(dir, 'manifest.txt'), 'utf8').split('\n').filter(Boolean);
  let bad = 0;
  const frames = [];
  const expects = [];
  for (const line of lines) {
    const [name, kind] = line.split(' ');
    const embd = readAB(join(dir, `${name}.embd.frame`));
    const expect = new Uint8Array(readAB(join(dir, `${name}.f32`)));
    const fail = (msg) => { console.log(`FAIL ${name}: ${msg}`); bad++; };

    // 1. embd's frame decodes in the seed decoder to the same bits.
    let res;
    try {
      res = decodeEmbedding(embd);
    } catch (e) {
      fail(`seed decodeEmbedding threw: ${e.message}`);
      continue;
    }
    if (res.version !== 1 || res.flags !== 0) fail(`version ${res.version} flags ${res.flags}`);
    if (res.dimensions !== expect.length / 4) fail(`dimensions ${res.dimensions}, expected ${expect.length / 4}`);
    if (HEADER_SIZE + res.dimensions * 4 !== embd.byteLength) fail(`frame is ${embd.byteLength} bytes for ${res.dimensions} dims`);
    const why = compareBits(res.vector, expect);
    if (why) fail(`seed decoder: ${why}`);

    // 2. Byte-identical to the seed encoder's own frame for the same input, re-encoded
    //    here (not read back from gen's file) from the expected bits / the doubles.
    let seedFrame;
    if (kind === 'f64') {
      const d = readAB(join(dir, `${name}.f64`));
      const dv = new DataView(d);
      const v = [];
      for (let i = 0; i < d.byteLength / 8; i++) v.push(dv.getFloat64(i * 8, true));
      seedFrame = new Uint8Array(encodeEmbedding(v));
    } else {
      const dv = new DataView(expect.buffer, expect.byteOffset, expect.byteLength);
      const bits = [];
      for (let i = 0; i < expect.length / 4; i++) bits.push(dv.getUint32(i * 4, true));
      seedFrame = new Uint8Array(encodeEmbedding(f32FromBits(bits)));
    }
    const e8 = new Uint8Array(embd);
    if (e8.length !== seedFrame.length) {
      fail(`embd frame ${e8.length} bytes, seed frame ${seedFrame.length}`);
    } else {
      const i = e8.findIndex((b, k) => b !== seedFrame[k]);
      if (i >= 0) fail(`embd and seed frames differ at byte ${i}: ${hex(e8, i)} vs ${hex(seedFrame, i)}`);
    }
    frames.push(e8);
    expects.push([name, expect]);
  }

  // 3. All embd frames in one seed batch envelope, through decodeBatch.
  const total = 4 + frames.reduce((a, f) => a + f.length, 0);
  const batch = new Uint8Array(total);
  new DataView(batch.buffer).setUint32(0, frames.length, true);
  let off = 4;
  for (const f of frames) { batch.set(f, off); off += f.length; }
  let n = 0;
  try {
    for (const r of decodeBatch(batch.buffer)) {
      const [name, expect] = expects[n++];
      const why = compareBits(r.vector, expect);
      if (why) { console.log(`FAIL batch ${name}: ${why}`); bad++; }
    }
  } catch (e) {
    console.log(`FAIL batch: seed decodeBatch threw after ${n} frames: ${e.message}`);
    bad++;
  }
  if (n !== frames.length) { console.log(`FAIL batch: ${n} of ${frames.length} frames`); bad++; }

  // 4. embd's dtype frames (version 2): the seed decoder must refuse every one, loudly,
  //    and never hand out its bytes as float32; in a batch, the version-1 frame before it
  //    still reads, then decodeBatch throws at the dtype frame.
  const v2lines = readFileSync(join(dir, 'v2manifest.txt'), 'utf8').split('\n').filter(Boolean);
  if (v2lines.length !== 8 * 4) { console.log(`FAIL v2: ${v2lines.length} dtype frames, expected 32`); bad++; }
  const seenDtypes = new Set();
  for (const line of v2lines) {
    const [name, dtype] = line.split(' ');
    seenDtypes.add(dtype);
    const frame = readAB(join(dir, `${name}.embd.frame`));
    try {
      const res = decodeEmbedding(frame);
      console.log(`FAIL ${name}: the seed decoder read a ${dtype} frame as ${res.dimensions} float32 values`);
      bad++;
    } catch (e) {
      if (!(e instanceof EmbeddingCodecError) || !/Unsupported codec version: 2 \(expected 1\)$/.test(e.message)) {
        console.log(`FAIL ${name}: the seed decoder threw something else: ${e.message}`);
        bad++;
      }
    }
    const batch = readAB(join(dir, `${name}.embd.batch`));
    let got = 0, threw = null;
    try {
      for (const r of decodeBatch(batch)) {
        if (r.version !== 1 || r.dimensions !== 16) { console.log(`FAIL ${name} batch: frame ${got} version ${r.version} dims ${r.dimensions}`); bad++; }
        got++;
      }
    } catch (e) {
      threw = e.message;
    }
    if (got !== 1 || !threw || !threw.includes('Unsupported codec version: 2')) {
      console.log(`FAIL ${name} batch: ${got} frames read, threw: ${threw}`);
      bad++;
    }
  }
  if (seenDtypes.size !== 8) { console.log(`FAIL v2: dtypes ${[...seenDtypes]}`); bad++; }

  if (bad) {
    console.log(`seed_codec check: ${bad} failure(s)`);
    process.exit(1);
  }
  console.log(`seed_codec check: ${lines.length} embd frames decode in the seed codec and match its encoder byte for byte; decodeBatch ok; the seed refuses all ${v2lines.length} of embd's version-2 dtype frames (and batches with one) with "Unsupported codec version"`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === resolve(process.argv[1])) {
  const [cmd, dir] = process.argv.slice(2);
  if (cmd === 'gen' && dir) gen(dir);
  else if (cmd === 'check' && dir) check(dir);
  else {
    console.error('usage: node seed_codec.mjs gen|check <dir>');
    process.exit(2);
  }
}
