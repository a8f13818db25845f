// Codec's token API (session frames [type u8][payload_len u32 BE][payload], TOKENS ids
// big-endian) against frames written here with a DataView from the protocol's definition
// (the seed document 003 and docs/CODEC.md), errors with code and offset, properties,
// and the stream reader under any chunking. Both modules agree.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { init, encodeFrame, encodeTokens, decodeFrames, decodeTokens, decodeFrameStream, FRAME, EmbeddingCodecError } from '../src/embd.js';
import { simd, scalar } from './helpers.mjs';

await init();
// The oracle: a frame from its definition.
function frameOf(type, payload) {
  const out = new Uint8Array(5 + payload.length);
  const dv = new DataView(out.buffer);
  dv.setUint8(0, type);
  dv.setUint32(1, payload.length, false);
  out.set(payload, 5);
  return out;
}
function tokensPayload(ids) {
  const b = new Uint8Array(ids.length * 4);
  const dv = new DataView(b.buffer);
  ids.forEach((id, i) => dv.setUint32(i * 4, id, false));
  return b;
}
const idsArb = fc.array(fc.integer({ min: 0, max: 0xffffffff }), { maxLength: 300 });

test('the documented example: 02 00 00 00 0C 00 00 C3 51 00 00 C3 52 00 00 C3 53', () => {
  assert.equal(Buffer.from(encodeTokens([50001, 50002, 50003])).toString('hex'), '020000000c0000c3510000c3520000c353');
  assert.deepEqual([...decodeTokens(Buffer.from('020000000c0000c3510000c3520000c353', 'hex'))], [50001, 50002, 50003]);
  assert.deepEqual([...encodeFrame(FRAME.EOS)], [3, 0, 0, 0, 0]);
});

test('TOKENS frames equal the DataView oracle both ways, in both modules', () => {
  fc.assert(fc.property(idsArb, (ids) => {
    const want = frameOf(2, tokensPayload(ids));
    for (const m of [simd, scalar]) {
      assert.deepEqual(m.encodeTokens(Uint32Array.from(ids)), want);
      assert.deepEqual([...m.decodeTokens(want)], ids);
    }
  }), { numRuns: 300 });
});

test('decodeFrames: a session (HELLO, READY, TOKENS..., ERROR, LATENT*, EOS, a newer type) as written by the oracle', () => {
  fc.assert(fc.property(fc.array(fc.oneof(
    fc.record({ t: fc.constant(2), ids: idsArb }),
    fc.record({ t: fc.constantFrom(0, 1, 4), s: fc.string() }),
    fc.record({ t: fc.constantFrom(5, 6, 7, 200), b: fc.uint8Array({ maxLength: 50 }) }),
  ), { maxLength: 12 }), (items) => {
    const frames = items.map((it) => it.t === 2 ? frameOf(2, tokensPayload(it.ids)) : 's' in it ? frameOf(it.t, new TextEncoder().encode(it.s)) : frameOf(it.t, it.b));
    frames.push(frameOf(3, new Uint8Array(0)));
    const all = new Uint8Array(frames.reduce((a, f) => a + f.length, 0));
    let at = 0; const offs = []; for (const f of frames) { offs.push(at); all.set(f, at); at += f.length; }
    for (const m of [simd, scalar]) {
      const got = m.decodeFrames(all);
      assert.equal(got.length, frames.length);
      got.forEach((g, i) => {
        assert.equal(g.type, frames[i][0]);
        assert.equal(g.offset, offs[i]);
        assert.deepEqual(g.payload, frames[i].subarray(5));
      });
    }
    // our encoder writes the same bytes for the types it knows
    items.forEach((it, i) => {
      if (it.t <= 6 && it.t !== 2) assert.deepEqual(encodeFrame(it.t, 's' in it ? it.s : it.b), frames[i]);
    });
  }), { numRuns: 200 });
});

function expectErr(fn, code, offset) {
  try { fn(); } catch (e) {
    assert.ok(e instanceof EmbeddingCodecError, String(e));
    assert.equal(e.code, code, e.message);
    assert.equal(e.offset, offset, `${code}: ${e.message}`);
    return e;
  }
  assert.fail(`no error, expected ${code}`);
}

test('errors: code and offset (the header rules at the length field, UTF-8 at its byte, truncation at the end)', () => {
  const ok = frameOf(2, tokensPayload([1, 2]));
  for (const m of [simd, scalar]) {
    expectErr(() => m.decodeFrames(frameOf(2, new Uint8Array(3))), 'CODEC_TOKENS_LENGTH', 1);
    expectErr(() => m.decodeFrames(frameOf(3, new Uint8Array(1))), 'CODEC_EOS_PAYLOAD', 1);
    expectErr(() => m.decodeFrames(frameOf(0, new Uint8Array([0x7b, 0xc0, 0xaf]))), 'CODEC_UTF8', 6);
    expectErr(() => m.decodeFrames(frameOf(4, new Uint8Array([0xed, 0xa0, 0x80]))), 'CODEC_UTF8', 5);
    expectErr(() => m.decodeFrames(ok.subarray(0, 7)), 'CODEC_TRUNCATED', 7);
    expectErr(() => m.decodeFrames(new Uint8Array([...ok, 2, 0, 0])), 'CODEC_TRUNCATED', ok.length + 3);
    const big = new Uint8Array(5); new DataView(big.buffer).setUint32(1, 0xffffffff); big[0] = 6;
    expectErr(() => m.decodeFrames(big), 'CODEC_FRAME_TOO_LARGE', 1);
    expectErr(() => m.decodeTokens(frameOf(3, new Uint8Array(0))), 'INVALID_ARGUMENT', 0);
    expectErr(() => m.encodeFrame(7, new Uint8Array(1)), 'CODEC_UNKNOWN_TYPE', 0);
    expectErr(() => m.encodeFrame(0, new Uint8Array([0xff])), 'CODEC_UTF8', 0);
  }
});

test('random bytes only raise EmbeddingCodecError', () => {
  fc.assert(fc.property(fc.uint8Array({ maxLength: 80 }), (b) => {
    for (const m of [simd, scalar]) {
      try { m.decodeFrames(b); } catch (e) { if (!(e instanceof EmbeddingCodecError)) throw e; }
      try { m.decodeTokens(b); } catch (e) { if (!(e instanceof EmbeddingCodecError)) throw e; }
    }
  }), { numRuns: 2000 });
});

test('decodeFrameStream: any chunking, ids for TOKENS frames, a cut mid-frame after the frames before', async () => {
  const session = [frameOf(0, new TextEncoder().encode('{"accept_tokenizers":["t"]}')), frameOf(2, tokensPayload([7, 8, 9])), frameOf(2, tokensPayload([10])), frameOf(3, new Uint8Array(0))];
  const all = new Uint8Array(session.reduce((a, f) => a + f.length, 0));
  let at = 0; for (const f of session) { all.set(f, at); at += f.length; }
  await fc.assert(fc.asyncProperty(fc.array(fc.integer({ min: 1, max: 40 }), { minLength: 1, maxLength: 6 }), async (sizes) => {
    async function* chunks() { let i = 0, k = 0; while (i < all.length) { const n = sizes[k++ % sizes.length]; yield all.slice(i, i + n); i += n; } }
    const got = [];
    for await (const f of decodeFrameStream(chunks())) got.push(f);
    assert.deepEqual(got.map((f) => f.typeName), ['HELLO', 'TOKENS', 'TOKENS', 'EOS']);
    assert.deepEqual([...got[1].ids], [7, 8, 9]);
    assert.deepEqual([...got[2].ids], [10]);
  }), { numRuns: 100 });
  const got = [];
  await assert.rejects(async () => { for await (const f of decodeFrameStream([all.subarray(0, session[0].length + 9)])) got.push(f); },
    (e) => e.code === 'CODEC_TRUNCATED' && e.offset === session[0].length + 9);
  assert.equal(got.length, 1);
  const bad = all.slice(); bad[session[0].length + 4] = 3; // TOKENS length 3
  await assert.rejects(async () => { for await (const f of decodeFrameStream([bad])) void f; }, (e) => e.code === 'CODEC_TOKENS_LENGTH' && e.offset === session[0].length + 1);
});
