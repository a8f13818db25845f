// The streaming decoder (any chunking, memory bounded by a frame, a body cut mid-frame)
// and MLEmbedClient against a local Node HTTP server speaking binary and JSON.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import fc from 'fast-check';
import * as seed from '../../tests/interop/seed_codec.mjs';
import { init, decodeStream, MLEmbedClient, EmbeddingCodecError, encodeBatch, encodeEmbedding } from '../src/embd.js';
import { sameBits, rng } from './helpers.mjs';

await init();

function seedBatch(vs) {
  const frames = vs.map((v) => new Uint8Array(seed.encodeEmbedding(v)));
  const out = new Uint8Array(4 + frames.reduce((a, f) => a + f.length, 0));
  new DataView(out.buffer).setUint32(0, vs.length, true);
  let at = 4; for (const f of frames) { out.set(f, at); at += f.length; }
  return out;
}
function vectors(n, dims, s) { const r = rng(s); return Array.from({ length: n }, () => Float32Array.from({ length: dims }, () => r() / 2 ** 32)); }
async function* chunked(u8, sizes) { let at = 0, k = 0; while (at < u8.length) { const n = Math.max(1, sizes[k++ % sizes.length]); yield u8.slice(at, at + n); at += n; } }

test('any chunking gives the seed decoder\'s frames, from async iterables and ReadableStreams', async () => {
  await fc.assert(fc.asyncProperty(fc.array(fc.integer({ min: 1, max: 200 }), { minLength: 1, maxLength: 10 }), fc.nat(6), async (sizes, n) => {
    const vs = vectors(n, 1 + (n * 7) % 50, n + 1);
    const body = seedBatch(vs);
    const got = [];
    for await (const f of decodeStream(chunked(body, sizes))) got.push(f.vector);
    assert.equal(got.length, vs.length);
    got.forEach((g, i) => assert.equal(sameBits(g, vs[i]), null));
  }), { numRuns: 200 });
  const vs = vectors(5, 1536, 2);
  const rs = new ReadableStream({ start(c) { const b = seedBatch(vs); for (let i = 0; i < b.length; i += 1000) c.enqueue(b.slice(i, i + 1000)); c.close(); } });
  let k = 0;
  for await (const f of decodeStream(rs)) assert.equal(sameBits(f.vector, vs[k++]), null);
  assert.equal(k, 5);
});

test('a body cut mid-frame: the frames before it, then FRAME_TRUNCATED at the frame', async () => {
  const vs = vectors(3, 16, 4);
  const body = seedBatch(vs);
  const cut = body.subarray(0, 4 + 80 + 40); // inside the second frame (each 16 + 64 bytes)
  const got = [];
  await assert.rejects(async () => { for await (const f of decodeStream(chunked(cut, [7]))) got.push(f.vector); },
    (e) => e instanceof EmbeddingCodecError && e.code === 'FRAME_TRUNCATED' && e.offset === 84);
  assert.equal(got.length, 1);
  await assert.rejects(async () => { for await (const f of decodeStream(chunked(body.subarray(0, 2), [1]))) void f; }, (e) => e.code === 'BATCH_TOO_SMALL');
  const extra = new Uint8Array(body.length + 2); extra.set(body);
  await assert.rejects(async () => { for await (const f of decodeStream(chunked(extra, [50]))) void f; }, (e) => e.code === 'BATCH_TRAILING' && e.offset === body.length);
  const short = body.slice(); short[0] = 4;
  await assert.rejects(async () => { for await (const f of decodeStream(chunked(short, [50]))) void f; }, (e) => e.code === 'BATCH_COUNT');
  const bad = body.slice(); bad[4 + 80 + 12] ^= 1; // second frame's header CRC
  got.length = 0;
  await assert.rejects(async () => { for await (const f of decodeStream(chunked(bad, [13]))) got.push(f); }, (e) => e.code === 'FRAME_HEADER_CRC' && e.offset === 4 + 80 + 12);
  assert.equal(got.length, 1);
});

test('bare frames (batch: false), dtype frames, and the frame size limit', async () => {
  const a = new Uint8Array(encodeEmbedding(new Float32Array([1, 2, 3, 4, 5, 6, 7, 8]), 2, { dtype: 'f16' }));
  const b = new Uint8Array(seed.encodeEmbedding(new Float32Array([9])));
  const z = new Uint8Array(encodeEmbedding(new Float32Array([7, 7, 7, 7]), 3, { dtype: 'bf16' })); // zlib + CRC
  const body = new Uint8Array(a.length + z.length + b.length); body.set(a); body.set(z, a.length); body.set(b, a.length + z.length);
  const got = [];
  for await (const f of decodeStream(chunked(body, [3]), { batch: false })) got.push([...f.vector]);
  assert.deepEqual(got, [[1, 2, 3, 4, 5, 6, 7, 8], [7, 7, 7, 7], [9]]);
  await assert.rejects(async () => { for await (const f of decodeStream(chunked(seedBatch(vectors(1, 1000, 1)), [64]), { maxFrameBytes: 1024 })) void f; }, (e) => e.code === 'STREAM_FRAME_TOO_LARGE' && e.offset === 4);
});

// ---- the client against a local server ----
const vecs = vectors(4, 1536, 9);
let cutNext = false;
const server = http.createServer((req, res) => {
  let body = '';
  req.on('data', (c) => { body += c; });
  req.on('end', () => {
    const q = JSON.parse(body);
    assert.equal(req.headers.authorization, 'Bearer k');
    const binary = req.headers.accept === 'application/octet-stream' && !q.model?.startsWith('json-only');
    if (req.url === '/v1/embed') {
      if (binary) { res.setHeader('content-type', 'application/octet-stream'); res.end(Buffer.from(seed.encodeEmbedding(vecs[0]))); }
      else { res.setHeader('content-type', 'application/json'); res.end(JSON.stringify({ embedding: Array.from(vecs[0]) })); }
      return;
    }
    if (req.url === '/v1/embed/batch') {
      const vs = vecs.slice(0, q.texts.length);
      if (!binary) { res.setHeader('content-type', 'application/json'); res.end(JSON.stringify({ embeddings: vs.map((v) => Array.from(v)) })); return; }
      res.setHeader('content-type', 'application/octet-stream');
      const b = Buffer.from(seedBatch(vs));
      if (cutNext === 'end') { res.end(b.subarray(0, 4 + 6160 + 100)); return; } // a clean end inside frame 1
      if (cutNext === 'drop') { // the connection lost inside frame 1, after a content-length promising all
        res.setHeader('content-length', b.length);
        res.write(b.subarray(0, 4 + 6160 + 100), () => setTimeout(() => res.destroy(), 50));
        return;
      }
      // in pieces, so the body streams
      let at = 0; const step = () => { if (at >= b.length) return res.end(); res.write(b.subarray(at, at + 5000)); at += 5000; setImmediate(step); }; step();
      return;
    }
    res.statusCode = 404; res.end();
  });
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
after(() => server.close());
const base = `http://127.0.0.1:${server.address().port}`;

test('MLEmbedClient: binary and JSON answers, one and batch', async () => {
  const c = new MLEmbedClient(base, 'k');
  assert.equal(sameBits(await c.embedOne('hi'), vecs[0]), null);
  assert.equal(sameBits(await c.embedOne('hi', { useBinaryCodec: false }), Float32Array.from(vecs[0])), null);
  // the server answers JSON though binary was asked: the JSON fallback
  assert.equal(sameBits(await c.embedOne('hi', { model: 'json-only' }), vecs[0]), null);
  for (const opts of [{}, { useBinaryCodec: false }, { model: 'json-only' }]) {
    const got = [];
    for await (const v of c.embedBatch(['a', 'b', 'c'], opts)) got.push(v);
    assert.equal(got.length, 3);
    got.forEach((g, i) => assert.equal(sameBits(g, vecs[i]), null));
  }
});

test('MLEmbedClient: a body cut short mid-frame delivers the frames before it, then throws', async () => {
  const c = new MLEmbedClient(base, 'k');
  for (const mode of ['end', 'drop']) {
    cutNext = mode;
    const got = [];
    const check = mode === 'end'
      ? (e) => e instanceof EmbeddingCodecError && e.code === 'FRAME_TRUNCATED' && e.offset === 4 + 6160
      // the fetch's own error for a dropped connection: undici's words (Node, Bun), Deno's
      : (e) => /terminated|aborted|socket|closed|error reading a body from connection/i.test(`${e.message} ${e.cause?.message ?? ''}`);
    await assert.rejects(async () => { for await (const v of c.embedBatch(['a', 'b', 'c'])) got.push(v); }, check);
    cutNext = false;
    assert.equal(got.length, 1, `${mode}: the first frame arrived before the cut`);
    assert.equal(sameBits(got[0], vecs[0]), null);
  }
});

test('encodeBatch output streams back through decodeStream', async () => {
  const vs = vectors(10, 33, 3);
  const got = [];
  for await (const f of decodeStream(chunked(new Uint8Array(encodeBatch(vs)), [17, 1, 300]))) got.push(f.vector);
  got.forEach((g, i) => assert.equal(sameBits(g, vs[i]), null));
});
