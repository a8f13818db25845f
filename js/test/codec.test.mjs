// The seed codec API against the seed itself (tests/interop/seed_codec.mjs), both ways,
// every error path with its code and offset, and fast-check properties.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import * as seed from '../../tests/interop/seed_codec.mjs';
import { init, encodeEmbedding, decodeEmbedding, decodeBatch, decodeEmbeddingFromBuffer,
  decodeBatchFromBuffer, encodeBatch, EmbeddingCodecError } from '../src/embd.js';
import { sameBits, f32FromBits, simd, scalar } from './helpers.mjs';

await init();
const u8 = (ab) => new Uint8Array(ab);
const f32arb = fc.array(fc.integer({ min: 0, max: 0xffffffff }), { maxLength: 300 }).map((b) => f32FromBits(b));

test('frames are byte-identical to the seed encoder (Float32Array and number[])', () => {
  fc.assert(fc.property(f32arb, (v) => {
    assert.deepEqual(u8(encodeEmbedding(v)), u8(seed.encodeEmbedding(v)));
  }), { numRuns: 300 });
  fc.assert(fc.property(fc.array(fc.double(), { maxLength: 100 }), (v) => {
    assert.deepEqual(u8(encodeEmbedding(v)), u8(seed.encodeEmbedding(v)));
  }), { numRuns: 300 });
});

test('seed frames decode bit for bit, and embd frames in the seed decoder', () => {
  fc.assert(fc.property(f32arb, (v) => {
    const a = decodeEmbedding(seed.encodeEmbedding(v));
    assert.equal(sameBits(a.vector, v), null);
    assert.equal(a.version, 1); assert.equal(a.flags, 0); assert.equal(a.dimensions, v.length);
    const b = seed.decodeEmbedding(encodeEmbedding(v));
    assert.equal(sameBits(b.vector, v), null);
  }), { numRuns: 300 });
});

test('decodeEmbedding gives a zero-copy view (as the seed) and copies when unaligned', () => {
  const buf = seed.encodeEmbedding(new Float32Array([1, 2, 3]));
  const r = decodeEmbedding(buf);
  assert.equal(r.vector.buffer, buf);
  assert.equal(r.vector.byteOffset, 16);
  const odd = new Uint8Array(buf.byteLength + 1);
  odd.set(u8(buf), 1);
  const r2 = decodeEmbedding(odd.subarray(1));
  assert.deepEqual([...r2.vector], [1, 2, 3]);
});

test('pooled Node Buffers: FromBuffer reads at the byte offset', () => {
  const frame = Buffer.from(seed.encodeEmbedding(new Float32Array([4, 5])));
  const pooled = Buffer.concat([Buffer.from('xyz'), frame]).subarray(3);
  assert.deepEqual([...decodeEmbeddingFromBuffer(pooled).vector], [4, 5]);
  const batch = Buffer.concat([Buffer.from('ab'), Buffer.from(encodeBatch([[1], [2, 3]]))]).subarray(2);
  assert.deepEqual([...decodeBatchFromBuffer(batch)].map((r) => [...r.vector]), [[1], [2, 3]]);
});

test('batches: the seed decodeBatch reads embd batches and the other way', () => {
  fc.assert(fc.property(fc.array(f32arb, { maxLength: 8 }), (vs) => {
    const ours = encodeBatch(vs);
    const back = [...seed.decodeBatch(ours)];
    assert.equal(back.length, vs.length);
    back.forEach((r, i) => assert.equal(sameBits(r.vector, vs[i]), null));
    const frames = vs.map((v) => u8(seed.encodeEmbedding(v)));
    const env = new Uint8Array(4 + frames.reduce((a, f) => a + f.length, 0));
    new DataView(env.buffer).setUint32(0, vs.length, true);
    let at = 4; for (const f of frames) { env.set(f, at); at += f.length; }
    const got = [...decodeBatch(env.buffer)];
    got.forEach((r, i) => assert.equal(sameBits(r.vector, vs[i]), null));
    assert.equal(got.length, vs.length);
  }), { numRuns: 200 });
});

test('dtype (version 2) frames, payload CRCs: round trips through both modules; the seed refuses v2', () => {
  const v = new Float32Array([0.5, -2, 3.25, 0, -0, 1024, 64, -1]);
  for (const dtype of ['f32', 'f16', 'bf16', 'fp8_e4m3', 'fp8_e5m2', 'int8', 'uint8']) {
    for (const flags of [0, 2]) {
      const vv = dtype === 'uint8' ? new Float32Array([0, 2, 3, 0, 1, 100, 255, 1]) : dtype === 'int8' ? new Float32Array([0, -2, 3, 0, 1, 100, 127, -1]) : dtype.startsWith('fp8') ? new Float32Array([0.5, -2, 3, 0, 1, 16, 256, -1]) : v;
      const a = simd.encodeEmbedding(vv, flags, { dtype });
      const b = scalar.encodeEmbedding(vv, flags, { dtype });
      assert.deepEqual(u8(a), u8(b), `${dtype} ${flags}`);
      const r = simd.decodeEmbedding(a);
      assert.equal(r.dtype, dtype);
      assert.equal(sameBits(r.vector, vv), null, `${dtype} flags ${flags}`);
      if (dtype !== 'f32') assert.throws(() => seed.decodeEmbedding(a), /Unsupported codec version: 2/);
    }
  }
  const bits = simd.encodeEmbedding(new Float32Array([1, 0, 1, 1, 0, 0, 0, 1]), 0, { dtype: 'ubinary' });
  assert.deepEqual([...simd.decodeEmbedding(bits).vector], [1, 0, 1, 1, 0, 0, 0, 1]);
});

// Each fault at its byte, with the C library's code.
function expectErr(fn, code, offset) {
  try { fn(); } catch (e) {
    assert.ok(e instanceof EmbeddingCodecError, `${e}`);
    assert.equal(e.code, code, e.message);
    assert.equal(e.offset, offset, `${code}: ${e.message}`);
    assert.match(e.message, /^\[EmbeddingCodec\] /);
    return e;
  }
  assert.fail(`no error, expected ${code}`);
}
test('every frame error: code and offset', () => {
  const good = () => u8(seed.encodeEmbedding(new Float32Array([1, 2, 3]))).slice();
  const refix = (f) => { new DataView(f.buffer).setUint32(12, seed.crc32(f.subarray(0, 12)), true); return f; };
  expectErr(() => decodeEmbedding(new Uint8Array(15)), 'FRAME_TOO_SMALL', 15);
  let f = good(); f[0] = 0x46; expectErr(() => decodeEmbedding(f), 'FRAME_BAD_MAGIC', 0);
  f = refix(Object.assign(good(), { 4: 3 })); expectErr(() => decodeEmbedding(f), 'FRAME_BAD_VERSION', 4);
  f = refix(Object.assign(good(), { 7: 1 })); expectErr(() => decodeEmbedding(f), 'FRAME_BAD_PADDING', 7);
  f = refix(Object.assign(good(), { 5: 4 })); expectErr(() => decodeEmbedding(f), 'FRAME_UNKNOWN_FLAGS', 5);
  f = good(); f[12] ^= 1; expectErr(() => decodeEmbedding(f), 'FRAME_HEADER_CRC', 12);
  f = good(); expectErr(() => decodeEmbedding(f.subarray(0, 27)), 'FRAME_TRUNCATED', 27);
  f = refix(Object.assign(good(), { 4: 2, 6: 9 })); expectErr(() => decodeEmbedding(f), 'FRAME_BAD_DTYPE', 6);
  const c = u8(encodeEmbedding(new Float32Array([1, 2, 3]), 2)).slice();
  c[20] ^= 1; expectErr(() => decodeEmbedding(c), 'FRAME_PAYLOAD_CRC', 28);
  // zlib payloads (node:zlib in Node): a broken stream, a short one, bytes after its end, a bad CRC
  const z = u8(encodeEmbedding(new Float32Array([1, 2, 3, 4]), 3)).slice();
  assert.deepEqual([...decodeEmbedding(z).vector], [1, 2, 3, 4]);
  const zlen = new DataView(z.buffer).getUint32(16, true);
  const zb = z.slice(); zb[22] ^= 0xff; // inside the deflate data, CRC trailer fixed up
  new DataView(zb.buffer).setUint32(20 + zlen, seed.crc32(zb.subarray(16, 20 + zlen)), true);
  expectErr(() => decodeEmbedding(zb), 'FRAME_INFLATE', 20);
  const zc = z.slice(); zc[20 + zlen] ^= 1;
  expectErr(() => decodeEmbedding(zc), 'FRAME_PAYLOAD_CRC', 20 + zlen);
  const short = u8(encodeEmbedding(new Float32Array([1, 2, 3]), 1)).slice();
  new DataView(short.buffer).setUint32(8, 4, true); // dims 4, stream holds 3 values
  new DataView(short.buffer).setUint32(12, seed.crc32(short.subarray(0, 12)), true);
  expectErr(() => decodeEmbedding(short), 'FRAME_INFLATE', 20);
  const one = u8(encodeEmbedding(new Float32Array([5, 6]), 1));
  const olen = new DataView(one.buffer).getUint32(16, true);
  const ztr = new Uint8Array(one.length + 2); ztr.set(one); new DataView(ztr.buffer).setUint32(16, olen + 2, true);
  expectErr(() => decodeEmbedding(ztr), 'FRAME_COMPRESSED_LENGTH', 20 + olen);
  // batches
  expectErr(() => [...decodeBatch(new Uint8Array(3))], 'BATCH_TOO_SMALL', 3);
  const env = new Uint8Array(encodeBatch([[1], [2]]));
  const big = env.slice(); big[0] = 9;
  expectErr(() => [...decodeBatch(big)], 'BATCH_COUNT', 0);
  const tr = new Uint8Array(env.length + 1); tr.set(env);
  expectErr(() => [...decodeBatch(tr)], 'BATCH_TRAILING', env.length);
  const bad = env.slice(); bad[4 + 20 + 12] ^= 1; // the second frame's header CRC
  const got = [];
  const e = expectErr(() => { for (const r of decodeBatch(bad)) got.push([...r.vector]); }, 'FRAME_HEADER_CRC', 4 + 20 + 12);
  assert.deepEqual(got, [[1]], 'the frame before the bad one was delivered');
  assert.ok(e.message.length > 20);
});

test('random bytes only ever raise EmbeddingCodecError (both modules)', () => {
  const header = u8(seed.encodeEmbedding(new Float32Array([1, 2])));
  fc.assert(fc.property(fc.uint8Array({ maxLength: 64 }), fc.nat(64), fc.boolean(), (b, cut, mix) => {
    const input = mix ? Uint8Array.from([...header.subarray(0, cut % 17), ...b]) : b;
    for (const m of [simd, scalar]) {
      try { m.decodeEmbedding(input); } catch (e) { if (!(e instanceof EmbeddingCodecError)) throw e; }
      try { for (const r of m.decodeBatch(input)) void r; } catch (e) { if (!(e instanceof EmbeddingCodecError)) throw e; }
    }
  }), { numRuns: 2000 });
});
