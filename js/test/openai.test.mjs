// decodeOpenAI / decodeBase64Embedding against JSON.parse, Buffer.from(s, 'base64') and
// DataView reads; errors with code and offset; SIMD128 and scalar modules agree.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { init, decodeOpenAI, decodeBase64Embedding, EmbeddingCodecError, DTYPES } from '../src/embd.js';
import { simd, scalar, sameBits, oracleToF32, randomBytes, rng, f32FromBits } from './helpers.mjs';

await init();

// float32 values printed the shortest way: JSON.parse then Math.fround gives them back
// exactly (one rounding: the text is the float's own), so JSON.parse is the oracle.
function floatBody(rows, { model = 'text-embedding-3-small', reverse = false } = {}) {
  const data = rows.map((r, i) => `{"object":"embedding","index":${i},"embedding":[${Array.from(r, (x) => JSON.stringify(x)).join(',')}]}`);
  if (reverse) data.reverse();
  return `{"object":"list","data":[${data.join(',')}],"model":"${model}","usage":{"prompt_tokens":7,"total_tokens":7}}`;
}
function b64Body(rows, dtypeBytes = (r) => Buffer.from(r.buffer, r.byteOffset, r.byteLength)) {
  const data = rows.map((r, i) => `{"object":"embedding","index":${i},"embedding":"${dtypeBytes(r).toString('base64')}"}`);
  return `{"object":"list","data":[${data.join(',')}],"model":"m","usage":{"prompt_tokens":1,"total_tokens":2}}`;
}
function randomRows(count, dims, seed) {
  const r = rng(seed);
  return Array.from({ length: count }, () => Float32Array.from({ length: dims }, () => ((r() / 2 ** 32) - 0.5) * 0.2));
}

test('float arrays: equal to JSON.parse + Float32Array (shortest float text), string and bytes', () => {
  for (const [count, dims] of [[1, 1], [1, 1536], [100, 1536], [3, 7]]) {
    const rows = randomRows(count, dims, count * dims);
    const body = floatBody(rows);
    const oracle = JSON.parse(body).data.map((d) => new Float32Array(d.embedding));
    for (const m of [simd, scalar]) {
      for (const input of [body, Buffer.from(body), new TextEncoder().encode(body).buffer]) {
        const r = m.decodeOpenAI(input);
        assert.equal(r.count, count); assert.equal(r.dims, dims);
        assert.equal(r.model, 'text-embedding-3-small');
        assert.deepEqual(r.usage, { prompt_tokens: 7, total_tokens: 7 });
        oracle.forEach((o, i) => assert.equal(sameBits(r.row(i), o), null, `row ${i}`));
        assert.equal(r.matrix.length, count * dims);
      }
    }
  }
});

test('data[] out of order is put in index order', () => {
  const rows = randomRows(5, 4, 9);
  const r = decodeOpenAI(floatBody(rows, { reverse: true }));
  rows.forEach((o, i) => assert.equal(sameBits(r.row(i), o), null));
});

test('one rounding where JSON.parse rounds twice (7.038531e-26)', () => {
  const r = decodeOpenAI('{"data":[{"index":0,"embedding":[7.038531e-26]}],"model":"m"}');
  assert.equal(new Uint32Array(r.matrix.buffer)[0], 0x15ae43fd);
  assert.equal(new Uint32Array(new Float32Array([JSON.parse('7.038531e-26')]).buffer)[0], 0x15ae43fe);
});

test('base64 bodies: equal to Buffer.from(s, "base64") viewed as float32, every way', () => {
  const rows = randomRows(100, 1536, 5);
  rows[0][0] = NaN; rows[0][1] = -0; rows[0][2] = Infinity;
  const body = b64Body(rows);
  const oracle = JSON.parse(body).data.map((d) => { const b = Buffer.from(d.embedding, 'base64'); return new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.length)); });
  for (const m of [simd, scalar]) {
    const r = m.decodeOpenAI(body);
    oracle.forEach((o, i) => assert.equal(sameBits(r.row(i), o), null));
  }
  const one = JSON.parse(body).data[3].embedding;
  assert.equal(sameBits(decodeBase64Embedding(one), oracle[3]), null);
});

test('every dtype and byte order of base64 bodies and strings: the DataView oracle', () => {
  for (const dt of DTYPES) {
    for (const bo of ['little', 'big']) {
      const per = { f32: 4, f16: 2, bf16: 2 }[dt] ?? 1;
      const wire = [randomBytes(64 * per, 11), randomBytes(64 * per, 12)];
      const body = `{"data":[${wire.map((w, i) => `{"index":${i},"embedding":"${Buffer.from(w).toString('base64')}"}`).join(',')}],"model":"m"}`;
      const want = wire.map((w) => oracleToF32(w, dt, bo));
      for (const m of [simd, scalar]) {
        let r;
        try { r = m.decodeOpenAI(body, { dtype: dt, byteOrder: bo }); } catch (e) {
          // int8/uint8/binary arrive as integer arrays in the APIs, not base64: say so.
          assert.ok(e instanceof EmbeddingCodecError, e.message);
          continue;
        }
        want.forEach((o, i) => assert.equal(sameBits(r.row(i), o), null, `${dt} ${bo}`));
        const one = m.decodeBase64Embedding(Buffer.from(wire[1]).toString('base64'), { dtype: dt, byteOrder: bo });
        assert.equal(sameBits(one, want[1]), null, `${dt} ${bo} single`);
      }
    }
  }
});

function expectErr(fn, code, offset) {
  try { fn(); } catch (e) {
    assert.ok(e instanceof EmbeddingCodecError, String(e));
    assert.equal(e.code, code, e.message);
    if (offset !== undefined) assert.equal(e.offset, offset, e.message);
    return e;
  }
  assert.fail(`no error: expected ${code}`);
}

test('errors: code and byte offset, the same in both modules', () => {
  const cases = [
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
  ];
  for (const [body, code, offset] of cases) {
    const a = expectErr(() => simd.decodeOpenAI(body), code, offset);
    const b = expectErr(() => scalar.decodeOpenAI(body), code, offset);
    assert.equal(a.offset, b.offset); assert.equal(a.message, b.message);
    assert.ok(a.offset <= body.length);
  }
  expectErr(() => decodeOpenAI('{"data":[{"index":0,"embedding":[1,2]}]}', { dims: 3 }), 'OPENAI_DIMS');
  expectErr(() => decodeBase64Embedding('AAAAAAA=', { dtype: 'f16' }), 'DTYPE_LENGTH');
  expectErr(() => decodeBase64Embedding('AA*AAAAAAAAAAAAA'), 'BASE64_CHAR', 2);
  // offsets count bytes: a non-ASCII model name before the fault moves it by its UTF-8 length
  const e = expectErr(() => decodeOpenAI('{"model":"\u00e9","data":[{"index":0,"embedding":[1,x]}]}'), 'OPENAI_JSON');
  assert.equal(e.offset, '{"model":"\u00e9","data":[{"index":0,"embedding":[1,'.length + 1);
});

test('property: random text and bytes only raise EmbeddingCodecError; float bodies match JSON.parse', () => {
  fc.assert(fc.property(fc.oneof(fc.string(), fc.uint8Array({ maxLength: 200 }), fc.json()), (s) => {
    try { decodeOpenAI(s); } catch (e) { if (!(e instanceof EmbeddingCodecError)) throw e; }
    try { decodeBase64Embedding(s); } catch (e) { if (!(e instanceof EmbeddingCodecError)) throw e; }
  }), { numRuns: 2000 });
  fc.assert(fc.property(fc.array(fc.array(fc.float({ noNaN: true, noDefaultInfinity: true }), { minLength: 3, maxLength: 3 }), { minLength: 1, maxLength: 5 }), (rows) => {
    const f = rows.map((r) => Float32Array.from(r));
    const r = decodeOpenAI(floatBody(f));
    // -0 prints as 0 in JSON: compare values, not bits
    f.forEach((o, i) => assert.deepEqual([...r.row(i)].map((x) => x + 0), [...o].map((x) => x + 0)));
  }), { numRuns: 300 });
});
