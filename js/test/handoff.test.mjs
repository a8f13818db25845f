// The hand-off of decodeOpenAI / decodeBase64Embedding (strings and bytes into module
// memory, results out of it) and the SIMD128 module's own memchr (js/wasm/memchr_simd128.c,
// which finds every JSON string's closing quote and backslash): oracles Buffer.from(s,
// 'base64') and JSON.parse; both modules. ~0.5 s.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { load } from '../src/embd.js';
import { simd, scalar, sameBits, randomBytes } from './helpers.mjs';

const b64 = (u) => Buffer.from(u).toString('base64');
const f32 = (buf) => new Float32Array(buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.length));
const body = (strings, model = 'm') =>
  `{"object":"list","data":[${strings.map((s, i) => `{"object":"embedding","index":${i},"embedding":"${s}"}`).join(',')}],"model":"${model}"}`;

test('memchr: strings of 1..225 floats (8..1200 characters: the closing quote in every lane and tail)', () => {
  for (const m of [simd, scalar]) {
    for (let n = 1; n <= 225; n += 1) {
      const bytes = randomBytes(n * 4, n + 1);
      const s = b64(bytes);
      const r = m.decodeOpenAI(body([s, s]));
      assert.equal(r.dims, n, `n=${n}`);
      const want = f32(Buffer.from(s, 'base64'));
      assert.equal(sameBits(r.row(0), want), null, `n=${n}`);
      assert.equal(sameBits(r.row(1), want), null, `n=${n}`);
    }
  }
});

test('memchr: an escaped "\\/" at every position of a 256-character string, and one backslash too many', () => {
  const base = b64(randomBytes(192, 7)); // 256 characters
  for (const m of [simd, scalar]) {
    for (let p = 0; p < 256; p++) {
      const s = base.slice(0, p) + '/' + base.slice(p + 1);
      const escaped = base.slice(0, p) + '\\/' + base.slice(p + 1);
      const r = m.decodeOpenAI(body([escaped]));
      assert.equal(sameBits(r.row(0), f32(Buffer.from(s, 'base64'))), null, `p=${p}`);
      // A lone backslash before a non-escape character is bad JSON, found at its string.
      const bad = body([base.slice(0, p) + '\\q' + base.slice(p + 1)]);
      assert.throws(() => m.decodeOpenAI(bad), (e) => e.code === 'OPENAI_JSON' && e.offset > 0, `p=${p}`);
    }
  }
});

test('results are arrays of their own: later calls and memory growth leave them intact', async () => {
  const m = await load({ simd: true }); // a fresh instance: its memory grows below
  const small = randomBytes(6144, 3);
  const a = m.decodeOpenAI(body([b64(small)]));
  const one = m.decodeBase64Embedding(b64(small));
  const big = randomBytes(2 << 20, 4); // 2 MiB of floats: the module's memory must grow
  const before = m.x.memory.buffer.byteLength;
  const b = m.decodeOpenAI(body([b64(big)], 'other'));
  assert.ok(m.x.memory.buffer.byteLength > before, 'memory grew');
  assert.equal(sameBits(b.matrix, f32(Buffer.from(big))), null);
  assert.equal(b.model, 'other');
  const c = m.decodeOpenAI(Buffer.from(body([b64(small)], 'other')));
  for (const v of [a.matrix, one, c.matrix]) {
    assert.equal(sameBits(v, f32(Buffer.from(small))), null);
    assert.equal(v.buffer.byteLength, 6144, 'an ArrayBuffer of exactly the floats');
  }
  assert.notEqual(a.matrix.buffer, c.matrix.buffer);
  assert.equal(a.model, 'm');
  assert.equal(c.model, 'other');
  // Model names of equal length that differ (the name is reused only for equal bytes).
  assert.equal(m.decodeOpenAI(body([b64(small)], 'model-a')).model, 'model-a');
  assert.equal(m.decodeOpenAI(body([b64(small)], 'model-b')).model, 'model-b');
  assert.equal(m.decodeOpenAI(body([b64(small)], 'mödel-ü')).model, 'mödel-ü');
  // An error leaves the next call correct.
  assert.throws(() => m.decodeBase64Embedding('AAAAAAAAAAA*AAAA'), { code: 'BASE64_CHAR', offset: 11 });
  assert.equal(sameBits(m.decodeBase64Embedding(b64(small)), f32(Buffer.from(small))), null);
});
