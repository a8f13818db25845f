// Codec's msgpack stream mode and its delta variant (embd/codec_stream.h, src/codec/codec_msgpack.c)
// against @msgpack/msgpack (pinned in package-lock.json) as the independent oracle: frames it
// writes decode to what it was given, frames embd writes are byte for byte what it writes and
// decode back with it; errors with code and the offsets of the native test's table
// (tests/test_codec_modes.c); the same bytes give the same frames or error message as the
// native library (embd tokens, when EMBD_NATIVE_BUILD names a native build; without one that
// test skips loudly); random bytes, any chunking.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { encode as mpEncode, decode as mpDecode } from '@msgpack/msgpack';
import { init, encodeMsgpack, decodeMsgpack, decodeMsgpackStream, msgpackReader, EmbeddingCodecError } from '../src/embd.js';
import { simd, scalar, rng } from './helpers.mjs';

await init();
const zigzag = (d) => (d >= 0 ? 2 * d : -2 * d - 1);
const cat = (parts) => { const out = new Uint8Array(parts.reduce((a, b) => a + b.length, 0)); let at = 0; for (const b of parts) { out.set(b, at); at += b.length; } return out; };
// What vLLM writes (ids, done, finish_reason when there is one) and what the Codec Python
// reference writes for msgpack-delta (base_id, ids_delta, done, finish_reason: nil when None).
function oracle({ ids, done, finishReason }, delta) {
  if (!delta) return mpEncode(finishReason === null ? { ids, done } : { ids, done, finish_reason: finishReason });
  let prev = delta.baseId;
  const ids_delta = ids.map((id) => { const z = zigzag(id - prev); prev = id; return z; });
  return mpEncode({ base_id: delta.baseId, ids_delta, done, finish_reason: finishReason });
}
const frameArb = fc.record({
  ids: fc.array(fc.integer({ min: 0, max: 0xffffffff }), { maxLength: 40 }),
  done: fc.boolean(),
  finishReason: fc.option(fc.constantFrom('stop', 'length', 'tool_calls', '', 'x'.repeat(40)), { nil: null }),
});
const same = (g, f) => { assert.deepEqual([...g.ids], f.ids); assert.equal(g.done, f.done); assert.equal(g.finishReason, f.finishReason); };

test('frames equal @msgpack/msgpack both ways (embd writes its bytes; its bytes decode), both modules', () => {
  fc.assert(fc.property(fc.array(frameArb, { maxLength: 6 }), (frames) => {
    const bytes = frames.map((f) => oracle(f));
    bytes.forEach((b, i) => {
      const ours = encodeMsgpack(frames[i]);
      assert.deepEqual(ours, b);
      const back = mpDecode(ours);
      assert.deepEqual(back.ids, frames[i].ids);
    });
    const all = cat(bytes);
    for (const m of [simd, scalar]) {
      const got = m.decodeMsgpack(all);
      assert.equal(got.length, frames.length);
      let at = 0;
      got.forEach((g, i) => {
        same(g, frames[i]);
        assert.equal(g.index, i);
        assert.equal(g.offset, at);
        assert.equal(g.size, bytes[i].length);
        assert.equal(g.toolCalls, null);
        at += bytes[i].length;
      });
    }
  }), { numRuns: 300 });
});

test('any map @msgpack/msgpack writes: unknown keys skipped, keys in any order, tool_calls raw, signed-int ids', () => {
  const extra = fc.dictionary(fc.string({ maxLength: 8 }).filter((k) => !['ids', 'done', 'finish_reason', 'tool_calls'].includes(k)),
    fc.oneof(fc.integer(), fc.double(), fc.string(), fc.constant(null), fc.array(fc.oneof(fc.integer(), fc.string()), { maxLength: 4 }),
      fc.uint8Array({ maxLength: 8 })), { maxKeys: 4 });
  const toolCalls = fc.option(fc.array(fc.record({ name: fc.string(), arguments_json: fc.string() }).map((x) => ({ ...x })), { maxLength: 3 }), { nil: null });
  fc.assert(fc.property(frameArb, extra, toolCalls, fc.integer({ min: 0, max: 1000 }), (f, more, tc, seed) => {
    const entries = [['ids', f.ids], ['done', f.done], ...(f.finishReason === null ? [] : [['finish_reason', f.finishReason]]),
      ...(tc ? [['tool_calls', tc]] : []), ...Object.entries(more)];
    const r = rng(seed + 1);
    for (let i = entries.length - 1; i > 0; i--) { const j = r() % (i + 1); [entries[i], entries[j]] = [entries[j], entries[i]]; }
    const bytes = mpEncode(Object.fromEntries(entries)); // string keys keep this order (integer-like ones go first)
    for (const m of [simd, scalar]) {
      const [g, ...rest] = m.decodeMsgpack(bytes);
      assert.equal(rest.length, 0);
      same(g, f);
      if (tc) assert.deepEqual(mpDecode(g.toolCalls), tc); else assert.equal(g.toolCalls, null);
    }
  }), { numRuns: 300 });
  // ids written as signed integers (int8..int64, >= 0) are ids too; a negative one is an error
  const signed = new Uint8Array([0x81, 0xa3, 0x69, 0x64, 0x73, 0x93, 0xd0, 5, 0xd1, 1, 0, 0xd3, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff]);
  assert.deepEqual([...decodeMsgpack(signed)[0].ids], [5, 256, 0xffffffff]);
  assert.throws(() => decodeMsgpack(new Uint8Array([0x81, 0xa3, 0x69, 0x64, 0x73, 0x91, 0xd0, 0xff])),
    (e) => e.code === 'MSGPACK' && e.offset === 6 && /ids\[0\] is a negative integer/.test(e.message));
});

test('msgpack-delta: @msgpack/msgpack both ways, ids rebuilt from base_id', () => {
  fc.assert(fc.property(frameArb, fc.integer({ min: 0, max: 0xffffffff }), (f, baseId) => {
    const want = oracle(f, { baseId });
    assert.deepEqual(encodeMsgpack(f, { delta: true, baseId }), want);
    for (const m of [simd, scalar]) {
      const [g] = m.decodeMsgpack(want, { delta: true });
      same(g, f);
    }
  }), { numRuns: 300 });
});

// The native test's table (tests/test_codec_modes.c, bads): the same bytes, the same offsets.
const IDS = [0x81, 0xa3, 0x69, 0x64, 0x73]; // {"ids": ...
const IDS2 = [0x82, 0xa3, 0x69, 0x64, 0x73, 0x90]; // {"ids": [], ...
const bads = [
  [[0x92, 0x01, 0x02], 0, 'a frame is a map, this is an array'],
  [[0x80], 0, 'no "ids" key'],
  [[...IDS, 0x01], 5, 'ids is an unsigned integer, expected an array'],
  [[...IDS, 0x94, 0x01, 0x02, 0x03, 0xa1, 0x78], 9, 'ids[3] is a string, expected an unsigned integer'],
  [[...IDS, 0x92, 0x01, 0xff], 7, 'ids[1] is a negative integer'],
  [[...IDS, 0x92, 0x01, 0xca, 0x3f, 0x80, 0x00, 0x00], 7, 'ids[1] is a float'],
  [[...IDS, 0x91, 0xcf, 0, 0, 0, 1, 0, 0, 0, 0], 6, 'ids[0] = 4294967296 is above UINT32_MAX'],
  [[...IDS2, 0xa4, ...Buffer.from('done'), 0x01], 11, 'done is an unsigned integer, expected a bool'],
  [[...IDS2, 0xad, ...Buffer.from('finish_reason'), 0x01], 20, 'finish_reason is an unsigned integer'],
  [[...IDS2, 0xa3, 0x69, 0x64, 0x73, 0x90], 6, 'duplicate key "ids"'],
  [[...IDS, 0xdd, 0xff, 0xff, 0xff, 0xff], 5, 'an array of 4294967295 elements does not fit'],
  [[0xdf, 0xff, 0xff, 0xff, 0xff], 0, 'a map of 4294967295 entries does not fit'],
  [[...IDS, 0xc6, 0xff, 0xff, 0xff, 0xff], 5, 'a binary of 4294967295 bytes does not fit'],
  [[...IDS, 0x91, 0xc1], 6, '0xc1'],
];
const deltaBads = [
  [[0x82, 0xa7, ...Buffer.from('base_id'), 0x00, 0xa3, 0x69, 0x64, 0x73, 0x90], 10, 'an "ids" key in a msgpack-delta frame'],
  [[0x82, 0xa7, ...Buffer.from('base_id'), 0x03, 0xa9, ...Buffer.from('ids_delta'), 0x92, 0x01, 0x09], 22, 'ids_delta[1] = 9 (a step of -5 from 2) takes the id out of 0..UINT32_MAX'],
  [[0x81, 0xa9, ...Buffer.from('ids_delta'), 0x90], 0, 'no "base_id" key'],
];

test('errors: MSGPACK at the byte at fault, in one piece and byte by byte; frames before are kept', () => {
  for (const m of [simd, scalar]) {
    for (const [delta, table] of [[false, bads], [true, deltaBads]]) {
      for (const [b, offset, msg] of table) {
        const u = Uint8Array.from(b);
        const check = (e) => e instanceof EmbeddingCodecError && e.code === 'MSGPACK' && e.offset === offset && e.message.includes(msg);
        assert.throws(() => m.decodeMsgpack(u, { delta, maxFrameBytes: 100 }), check, `${Buffer.from(u).toString('hex')}`);
        const r = m.msgpackReader({ delta, maxFrameBytes: 100 });
        assert.throws(() => { for (const x of u) r.feed(Uint8Array.of(x)); r.finish(); }, check);
        r.destroy();
      }
    }
    const a = encodeMsgpack({ ids: [1, 2], done: false });
    const cut = cat([a, a.subarray(0, 4)]);
    try { m.decodeMsgpack(cut); assert.fail('no error'); } catch (e) {
      assert.ok(e instanceof EmbeddingCodecError);
      assert.equal(e.code, 'MSGPACK');
      assert.equal(e.offset, cut.length);
      assert.equal(e.frames.length, 0, 'the complete frame came with the feed before finish');
    }
    const r = m.msgpackReader();
    assert.equal(r.feed(cut).length, 1);
    assert.throws(() => r.finish(), (e) => e.code === 'MSGPACK' && e.offset === cut.length);
    assert.throws(() => r.feed(a), (e) => e.code === 'INVALID_ARGUMENT');
  }
});

test('random bytes only raise EmbeddingCodecError (plain and delta)', () => {
  fc.assert(fc.property(fc.uint8Array({ maxLength: 64 }), fc.boolean(), (b, delta) => {
    for (const m of [simd, scalar]) {
      try { m.decodeMsgpack(b, { delta }); } catch (e) { if (!(e instanceof EmbeddingCodecError)) throw e; }
    }
  }), { numRuns: 2000 });
});

test('any chunking gives the same frames', () => {
  const frames = [{ ids: [1, 2, 3], done: false, finishReason: null }, { ids: [], done: false, finishReason: null }, { ids: [9], done: true, finishReason: 'stop' }];
  const all = cat(frames.map((f) => oracle(f)));
  fc.assert(fc.property(fc.array(fc.integer({ min: 1, max: 9 }), { minLength: 1, maxLength: 5 }), (sizes) => {
    const r = msgpackReader();
    const got = [];
    for (let i = 0, k = 0; i < all.length; k++) { const n = sizes[k % sizes.length]; got.push(...r.feed(all.slice(i, i + n))); i += n; }
    got.push(...r.finish());
    assert.deepEqual(got.map((f) => [[...f.ids], f.done, f.finishReason]), frames.map((f) => [f.ids, f.done, f.finishReason]));
  }), { numRuns: 100 });
});

// The native library on the same bytes: `embd tokens --mode msgpack[-delta]` prints the ids of
// each frame, or the reader's message (which names the byte) on stderr with exit 1.
const build = process.env.EMBD_NATIVE_BUILD;
const cli = build && join(build, 'embd');
const skip = !(cli && existsSync(cli)) && `SKIP: no native embd (set EMBD_NATIVE_BUILD to a build dir with the CLI; got ${build ?? 'nothing'})`;
if (skip) console.log(`# ${skip}`);

test('the same bytes give the native library\'s frames, or its error message', { skip }, () => {
  const r = rng(34);
  const cases = [];
  for (const [delta, table] of [[false, bads], [true, deltaBads]]) for (const [b] of table) cases.push([delta, Uint8Array.from(b)]);
  // frames from the oracle, then damaged: a byte changed, or the stream cut
  for (let i = 0; i < 120; i++) {
    const delta = i % 2 === 1;
    const ids = Array.from({ length: r() % 12 }, () => r() % (i % 3 ? 200 : 0xffffffff));
    const f = { ids, done: (r() & 1) === 1, finishReason: r() % 3 ? null : 'stop' };
    let b = cat([oracle(f, delta && { baseId: r() % 1000 }), oracle({ ...f, ids: ids.slice(1) }, delta && { baseId: 7 })]);
    if (i % 4) { b = b.slice(); b[r() % b.length] = r() & 0xff; } else if (i % 8 === 0) b = b.subarray(0, r() % b.length);
    cases.push([delta, b]);
  }
  let oks = 0, errs = 0;
  for (const [delta, b] of cases) {
    const p = spawnSync(cli, ['tokens', '--mode', delta ? 'msgpack-delta' : 'msgpack', '-'], { input: b, encoding: 'utf8' });
    const hex = Buffer.from(b).toString('hex');
    for (const m of [simd, scalar]) {
      let frames, err;
      try { frames = m.decodeMsgpack(b, { delta, maxFrameBytes: 16 << 20 }); } catch (e) { err = e; }
      if (p.status === 0) {
        oks++;
        assert.equal(err, undefined, `${hex}: native decoded it, js: ${err?.message}`);
        assert.equal(p.stdout, frames.map((f) => [...f.ids].join(' ') + '\n').join(''), hex);
      } else {
        errs++;
        assert.equal(p.status, 1, `${hex}: native exit ${p.status}: ${p.stderr}`);
        assert.ok(err instanceof EmbeddingCodecError, `${hex}: native failed (${p.stderr.trim()}), js decoded it`);
        assert.equal(err.code, 'MSGPACK', hex);
        // native: "embd tokens: -: <message>"; js: "[EmbeddingCodec] <message>" (the frame
        // and its first byte, then what is wrong; the offsets are the native table's above)
        const msg = err.message.replace('[EmbeddingCodec] ', '');
        assert.ok(p.stderr.trim().endsWith(msg), `${hex}: native "${p.stderr.trim()}" vs js "${msg}"`);
      }
    }
  }
  console.log(`# native agreement: ${oks / 2} streams decoded, ${errs / 2} errors`);
  assert.ok(oks >= 40 && errs >= 40, 'both outcomes are exercised');
});

test('decodeMsgpackStream: any chunking gives the frames; a stream cut inside a frame fails after the whole ones', async () => {
  const frames = [{ ids: [1, 2, 3], done: false, finishReason: null }, { ids: [], done: false, finishReason: null }, { ids: [9, 70000], done: true, finishReason: 'stop' }];
  const all = cat(frames.map((f) => oracle(f)));
  await fc.assert(fc.asyncProperty(fc.array(fc.integer({ min: 1, max: 9 }), { minLength: 1, maxLength: 5 }), async (sizes) => {
    async function* chunks(bytes) { let i = 0, k = 0; while (i < bytes.length) { const n = sizes[k++ % sizes.length]; yield bytes.slice(i, i + n); i += n; } }
    const got = [];
    for await (const f of decodeMsgpackStream(chunks(all))) got.push(f);
    assert.deepEqual(got.map((f) => [[...f.ids], f.done, f.finishReason]), frames.map((f) => [f.ids, f.done, f.finishReason]));
    const cut = [];
    await assert.rejects((async () => { for await (const f of decodeMsgpackStream(chunks(all.subarray(0, all.length - 1)))) cut.push(f); })(),
      (err) => err instanceof EmbeddingCodecError && err.code === 'MSGPACK');
    assert.equal(cut.length, 2);
  }), { numRuns: 50 });
});
