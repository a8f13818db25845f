// zlib payloads (frame flags bit 0) both ways: node:zlib's synchronous calls, and the
// CompressionStream / DecompressionStream path browsers get (load({zlib: 'streams'})),
// which Node 20 and Node 24 also have (they differ on bytes after a stream's end, as
// browsers may). The frames and expectations come from zlib_cases.mjs (node:zlib and the
// seed's CRC-32), the encoder's output is read back by node:zlib. ~1 s.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { inflateSync } from 'node:zlib';
import { load, init, decodeStream, MLEmbedClient, EmbeddingCodecError } from '../src/embd.js';
import { crc32 } from '../../tests/interop/seed_codec.mjs';
import { zlibCases, zframe } from './zlib_cases.mjs';

const sync = await load({ simd: true });
const streams = await load({ simd: true, zlib: 'streams' });
const streamsScalar = await load({ simd: false, zlib: 'streams' });
const bits = (f) => Array.from(new Uint32Array(f.buffer, f.byteOffset, f.length));

async function outcome(fn) {
  try {
    const r = await fn();
    return { bits: bits(r.vector), dims: r.dimensions };
  } catch (e) {
    if (!(e instanceof EmbeddingCodecError)) throw e;
    return { code: e.code, offset: e.offset };
  }
}
function expectCase(c, got, how) {
  if (c.bits) assert.deepEqual(got, { bits: c.bits, dims: c.bits.length }, `${c.name} (${how})`);
  else assert.deepEqual(got, { code: c.code, offset: c.offset }, `${c.name} (${how})`);
}

test('every case: node:zlib (sync), and DecompressionStream (async) in both modules', async () => {
  for (const c of zlibCases()) {
    expectCase(c, await outcome(() => sync.decodeEmbedding(c.frame)), 'node:zlib');
    expectCase(c, await outcome(() => sync.decodeEmbeddingAsync(c.frame)), 'node:zlib, async call');
    expectCase(c, await outcome(() => streams.decodeEmbeddingAsync(c.frame)), 'DecompressionStream');
    expectCase(c, await outcome(() => streamsScalar.decodeEmbeddingAsync(c.frame)), 'DecompressionStream, scalar module');
  }
});

test('without node:zlib the synchronous calls refuse zlib frames, naming the asynchronous ones', () => {
  const [c] = zlibCases();
  assert.throws(() => streams.decodeEmbedding(c.frame), (e) => e.code === 'UNAVAILABLE' && e.offset === 5 && /decodeEmbeddingAsync/.test(e.message));
  const batch = new Uint8Array(4 + c.frame.length); batch[0] = 1; batch.set(c.frame, 4);
  assert.throws(() => [...streams.decodeBatch(batch)], (e) => e.code === 'UNAVAILABLE' && e.offset === 9 && /decodeStream/.test(e.message));
  assert.throws(() => streams.encodeEmbedding(new Float32Array([1]), 1), (e) => e.code === 'UNAVAILABLE' && /encodeEmbeddingAsync/.test(e.message));
  // frames without zlib stay synchronous
  assert.deepEqual([...streams.decodeEmbedding(streams.encodeEmbedding(new Float32Array([1, 2]), 2)).vector], [1, 2]);
});

test('encodeEmbeddingAsync with CompressionStream: node:zlib inflates the payload, the seed CRC checks the frame', async () => {
  const v = Float32Array.from({ length: 300 }, (_, i) => Math.sin(i));
  for (const [flags, dtype, raw] of [[1, undefined, new Uint8Array(v.buffer)], [3, undefined, new Uint8Array(v.buffer)],
    [3, 'bf16', new Uint8Array(Uint16Array.from(new Uint32Array(v.buffer), (x) => (x + 0x7fff + ((x >>> 16) & 1)) >>> 16).buffer)]]) {
    const f = new Uint8Array(await streams.encodeEmbeddingAsync(v, flags, { dtype }));
    const dv = new DataView(f.buffer);
    assert.equal(dv.getUint32(12, true), crc32(f.subarray(0, 12)));
    assert.equal(f[5], flags);
    const clen = dv.getUint32(16, true);
    assert.equal(f.length, 20 + clen + (flags & 2 ? 4 : 0));
    if (flags & 2) assert.equal(dv.getUint32(20 + clen, true), crc32(f.subarray(16, 20 + clen)));
    assert.deepEqual(new Uint8Array(inflateSync(f.subarray(20, 20 + clen))), raw, `flags ${flags} ${dtype}`);
    // and back through both inflaters
    assert.deepEqual(bits((await streams.decodeEmbeddingAsync(f)).vector), bits(sync.decodeEmbedding(f).vector));
  }
});

test('decodeStream and MLEmbedClient.embedOne without node:zlib: zlib frames decoded as they arrive, faults with their offsets', async () => {
  await init({ simd: true, zlib: 'streams' });
  const cases = zlibCases();
  const good = cases.filter((c) => c.bits);
  const frames = good.map((c) => c.frame);
  const total = 4 + frames.reduce((a, f) => a + f.length, 0);
  const env = new Uint8Array(total);
  new DataView(env.buffer).setUint32(0, frames.length, true);
  let at = 4;
  for (const f of frames) { env.set(f, at); at += f.length; }
  // chunks of 7 bytes: every frame is assembled from pieces
  const chunks = function* (u, n) { for (let i = 0; i < u.length; i += n) yield u.subarray(i, i + n); };
  const got = [];
  for await (const r of decodeStream(chunks(env, 7))) got.push(bits(r.vector));
  assert.deepEqual(got, good.map((c) => c.bits));
  // a faulty frame after a good one: the good one first, then the error at its offset in the stream
  const junk = cases.find((c) => c.code === 'FRAME_COMPRESSED_LENGTH');
  const two = new Uint8Array(4 + frames[0].length + junk.frame.length);
  two[0] = 2; two.set(frames[0], 4); two.set(junk.frame, 4 + frames[0].length);
  const seen = [];
  await assert.rejects((async () => { for await (const r of decodeStream(chunks(two, 5))) seen.push(bits(r.vector)); })(),
    (e) => e.code === 'FRAME_COMPRESSED_LENGTH' && e.offset === 4 + frames[0].length + junk.offset);
  assert.deepEqual(seen, [good[0].bits]);
  // the client: a binary answer holding a zlib frame
  const client = new MLEmbedClient('http://x', 'k', {
    fetch: async () => new Response(frames[1], { headers: { 'content-type': 'application/octet-stream' } }),
  });
  assert.deepEqual(bits(await client.embedOne('t')), good[1].bits);
});

test('property: mutated zlib streams give the same values, or the same code and offset, through node:zlib and DecompressionStream', async () => {
  const fc = (await import('fast-check')).default;
  // the good cases' streams, rewrapped after each mutation (flags 1: no payload CRC to stop it)
  const streamsOf = zlibCases().filter((c) => c.bits && c.bits.length <= 100).map((c) => {
    const dv = new DataView(c.frame.buffer, c.frame.byteOffset);
    return { z: c.frame.slice(20, 20 + dv.getUint32(16, true)), dims: dv.getUint32(8, true), dt: c.frame[6] };
  });
  const hist = {};
  await fc.assert(fc.asyncProperty(fc.nat(streamsOf.length - 1), fc.array(fc.tuple(fc.nat(1 << 16), fc.nat(255)), { maxLength: 2 }),
    fc.nat(6), fc.uint8Array({ maxLength: 6 }), async (k, edits, cut, tail) => {
      const { z, dims, dt } = streamsOf[k];
      const m = new Uint8Array(Math.max(0, z.length - cut) + tail.length);
      m.set(z.subarray(0, z.length - cut)); m.set(tail, z.length - cut);
      for (const [at, v] of edits) if (m.length) m[at % m.length] = v;
      const f = zframe(m, dims, { dt });
      const a = await outcome(() => sync.decodeEmbedding(f));
      const b = await outcome(() => streams.decodeEmbeddingAsync(f));
      hist[a.code ?? 'ok'] = (hist[a.code ?? 'ok'] ?? 0) + 1;
      assert.deepEqual(b, a);
    }), {
    numRuns: 200,
    // Each outcome once for certain (an untouched stream, bytes after its end, a broken
    // header): by chance alone an untouched stream came up in ~0.7% of runs, so 200 runs
    // missed it about one time in four.
    examples: [[0, [], 0, new Uint8Array(0)], [0, [], 0, Uint8Array.of(1, 2)], [0, [[0, 0]], 0, new Uint8Array(0)]],
  });
  // the runs reached every outcome (values, a broken stream, bytes after its end)
  for (const o of ['ok', 'FRAME_INFLATE', 'FRAME_COMPRESSED_LENGTH']) assert.ok(hist[o] > 0, JSON.stringify(hist));
});
