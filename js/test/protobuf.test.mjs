// Codec's protobuf stream mode and its delta variant (embd/codec_stream.h, proto/codec.proto)
// against an encoder written here from protobuf's wire format (varints, packed field 1,
// done in field 2, finish_reason in field 3, base_id in field 5 or 4, zigzag deltas), the
// documented smallest frame, errors with code and offset, random bytes, any chunking.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { init, encodeProtobuf, decodeProtobuf, decodeProtobufStream, EmbeddingCodecError } from '../src/embd.js';
import { simd, scalar } from './helpers.mjs';

await init();
const varint = (v) => { const out = []; v = BigInt(v); do { let b = Number(v & 0x7fn); v >>= 7n; if (v) b |= 0x80; out.push(b); } while (v); return out; };
const zigzag = (d) => (d >= 0 ? 2 * d : -2 * d - 1);
// What vLLM / libcodec write: ids packed (omitted when none), done always, finish_reason,
// then (delta) base_id; the 4-byte big-endian length prefix first.
function oracle({ ids, done, finishReason }, delta) {
  const body = [];
  let vals = ids;
  if (delta) { let prev = delta.baseId; vals = ids.map((id) => { const z = zigzag(id - prev); prev = id; return z; }); }
  if (vals.length) { const packed = vals.flatMap(varint); body.push(0x0a, ...varint(packed.length), ...packed); }
  body.push(0x10, done ? 1 : 0);
  if (finishReason !== null) { const b = [...new TextEncoder().encode(finishReason)]; body.push(0x1a, ...varint(b.length), ...b); }
  if (delta) body.push(delta.field4 ? 0x20 : 0x28, ...varint(delta.baseId));
  const out = new Uint8Array(4 + body.length);
  new DataView(out.buffer).setUint32(0, body.length, false);
  out.set(body, 4);
  return out;
}
const frameArb = fc.record({
  ids: fc.array(fc.integer({ min: 0, max: 0xffffffff }), { maxLength: 40 }),
  done: fc.boolean(),
  finishReason: fc.option(fc.constantFrom('stop', 'length', 'tool_calls', ''), { nil: null }),
});

test('the smallest frame is 00 00 00 02 10 00; frames equal the oracle both ways, both modules', () => {
  assert.equal(Buffer.from(encodeProtobuf({})).toString('hex'), '000000021000');
  fc.assert(fc.property(fc.array(frameArb, { maxLength: 6 }), (frames) => {
    const bytes = frames.map((f) => oracle(f));
    bytes.forEach((b, i) => assert.deepEqual(encodeProtobuf(frames[i]), b));
    const all = new Uint8Array(bytes.reduce((a, b) => a + b.length, 0));
    let at = 0; for (const b of bytes) { all.set(b, at); at += b.length; }
    for (const m of [simd, scalar]) {
      const got = m.decodeProtobuf(all);
      assert.equal(got.length, frames.length);
      got.forEach((g, i) => {
        assert.deepEqual([...g.ids], frames[i].ids);
        assert.equal(g.done, frames[i].done);
        assert.equal(g.finishReason, frames[i].finishReason);
        assert.equal(g.index, i);
      });
    }
  }), { numRuns: 300 });
});

test('protobuf-delta (base_id in field 5, or 4): the oracle both ways, ids rebuilt', () => {
  fc.assert(fc.property(frameArb, fc.integer({ min: 0, max: 0x7fffffff }), fc.boolean(), (f, baseId, field4) => {
    // neighbouring ids within 2^31 (the uint32 zigzag field's range)
    const ids = f.ids.map((x) => x & 0x3fffffff);
    const fr = { ...f, ids };
    const want = oracle(fr, { baseId, field4 });
    assert.deepEqual(encodeProtobuf(fr, { delta: true, baseId, baseId4: field4 }), want);
    const [g] = decodeProtobuf(want, { delta: true, baseId4: field4 });
    assert.deepEqual([...g.ids], ids);
    assert.equal(g.done, f.done);
  }), { numRuns: 300 });
});

test('errors: PROTOBUF with the byte (cut stream, group wire type, long varint, frame too large); the frames before are kept', () => {
  const a = oracle({ ids: [1, 2], done: false, finishReason: null });
  const cut = new Uint8Array([...a, ...a.subarray(0, 6)]);
  for (const m of [simd, scalar]) {
    try { m.decodeProtobuf(cut); assert.fail('no error'); } catch (e) {
      assert.ok(e instanceof EmbeddingCodecError);
      assert.equal(e.code, 'PROTOBUF');
      assert.equal(e.offset, cut.length);
      assert.equal(e.frames.length, 0, 'the complete frame came with the feed before finish');
    }
    const r = m.protobufReader();
    assert.equal(r.feed(cut).length, 1);
    assert.throws(() => r.finish(), (e) => e.code === 'PROTOBUF' && e.offset === cut.length);
    const group = new Uint8Array([0, 0, 0, 2, 0x0b, 0x0c]); // field 1, wire type 3
    assert.throws(() => m.decodeProtobuf(group), (e) => e.code === 'PROTOBUF' && e.offset === 4);
    const long = new Uint8Array([0, 0, 0, 12, 0x08, ...Array(11).fill(0x80)]);
    assert.throws(() => m.decodeProtobuf(long), (e) => e.code === 'PROTOBUF' && e.offset >= 5 && e.offset <= 16);
    const big = new Uint8Array([0, 0, 0x10, 0, 0x10]);
    assert.throws(() => m.decodeProtobuf(big, { maxFrameBytes: 100 }), (e) => e.code === 'PROTOBUF' && e.offset === 0);
  }
});

test('random bytes only raise EmbeddingCodecError (plain and delta)', () => {
  fc.assert(fc.property(fc.uint8Array({ maxLength: 64 }), fc.boolean(), (b, delta) => {
    for (const m of [simd, scalar]) {
      try { m.decodeProtobuf(b, { delta }); } catch (e) { if (!(e instanceof EmbeddingCodecError)) throw e; }
    }
  }), { numRuns: 2000 });
});

test('decodeProtobufStream: any chunking gives the frames', async () => {
  const frames = [{ ids: [1, 2, 3], done: false, finishReason: null }, { ids: [], done: false, finishReason: null }, { ids: [9], done: true, finishReason: 'stop' }];
  const all = Uint8Array.from(frames.flatMap((f) => [...oracle(f)]));
  await fc.assert(fc.asyncProperty(fc.array(fc.integer({ min: 1, max: 9 }), { minLength: 1, maxLength: 5 }), async (sizes) => {
    async function* chunks() { let i = 0, k = 0; while (i < all.length) { const n = sizes[k++ % sizes.length]; yield all.slice(i, i + n); i += n; } }
    const got = [];
    for await (const f of decodeProtobufStream(chunks())) got.push(f);
    assert.deepEqual(got.map((f) => [[...f.ids], f.done, f.finishReason]), frames.map((f) => [f.ids, f.done, f.finishReason]));
  }), { numRuns: 100 });
});
