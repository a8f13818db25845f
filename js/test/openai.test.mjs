// decodeOpenAI / decodeBase64Embedding against JSON.parse, Buffer.from(s, 'base64') and
// DataView reads; errors with code and offset; SIMD128 and scalar modules agree.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { init, decodeOpenAI, decodeBase64Embedding, EmbeddingCodecError, DTYPES } from '../src/embd.js';
import { simd, scalar, sameBits, oracleToF32, randomBytes, rng, f32FromBits, OPENAI_ERRORS, floatBody, b64Body, randomRows } from './helpers.mjs';

await init();

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
  for (const [body, code, offset] of OPENAI_ERRORS) {
    const a = expectErr(() => simd.decodeOpenAI(body), code, offset);
    const b = expectErr(() => scalar.decodeOpenAI(body), code, offset);
    assert.equal(a.offset, b.offset); assert.equal(a.message, b.message);
    assert.ok(a.offset <= Buffer.byteLength(body), `${JSON.stringify(body)}: offset ${a.offset}`);
  }
  expectErr(() => decodeOpenAI('{"data":[{"index":0,"embedding":[1,2]}]}', { dims: 3 }), 'OPENAI_DIMS');
  expectErr(() => decodeBase64Embedding('AAAAAAA=', { dtype: 'f16' }), 'DTYPE_LENGTH');
  expectErr(() => decodeBase64Embedding('AA*AAAAAAAAAAAAA'), 'BASE64_CHAR', 2);
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

// The digit counts and forms of the number fast path (decimal.h: 1..24 fraction digits,
// leading zeros, exponents down to -44 in two divisions, several integer digits), and
// texts a few double ulps either side of a float32 midpoint (where that path narrows a
// rounded double only far enough from one), in both modules. The oracle is exact rational
// arithmetic in BigInt on the text and on the midpoint's bits: it shares no rounding with
// JSON.parse, Math.fround or embd.
function f32Bits(x) { const d = new DataView(new ArrayBuffer(4)); d.setFloat32(0, x); return d.getUint32(0); }
function f32Of(bits) { const d = new DataView(new ArrayBuffer(4)); d.setUint32(0, bits); return d.getFloat32(0); }
// A finite double as [M, B] with |x| = M * 2^B (M a BigInt).
function exactDouble(x) {
  const d = new DataView(new ArrayBuffer(8)); d.setFloat64(0, Math.abs(x));
  const hi = d.getUint32(0), lo = d.getUint32(4), e = hi >>> 20;
  const m = (BigInt(hi & 0xfffff) << 32n) | BigInt(lo);
  return e === 0 ? [m, -1074] : [m | (1n << 52n), e - 1075];
}
// A decimal text's |value| as [D, E] with |t| = D * 10^E.
function exactDecimal(t) {
  const m = /^-?(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(t);
  return [BigInt(m[1] + (m[2] ?? '')), Number(m[3] ?? 0) - (m[2] ?? '').length];
}
// sign of D*10^E - M*2^B
function cmpExact([D, E], [M, B]) {
  let l = D, r = M;
  if (E >= 0) l *= 10n ** BigInt(E); else r *= 10n ** BigInt(-E);
  if (B >= 0) r *= 2n ** BigInt(B); else l *= 2n ** BigInt(-B);
  return l < r ? -1 : l > r ? 1 : 0;
}

test('number texts of every length and near float32 midpoints: an exact BigInt oracle, both modules', () => {
  const r = rng(34);
  const texts = [], want = [];
  // normal floats from 2^-100 to 2^100, either sign (no subnormals: their ulp is absolute)
  const randomFloat = () => { for (;;) { const b = (((r() & 1) << 31) | ((27 + (r() % 200)) << 23) | (r() & 0x7fffff)) >>> 0; return f32Of(b); } };
  for (let i = 0; i < 400; i++) {
    // texts within 5e-9 relative of f (9+ significant digits): f is their nearest float32
    const f = randomFloat(), scale = [1, 1e-3, 1e-6, 1e3][i % 4];
    const g = f32Of(f32Bits(Math.fround(f * scale)));
    if (!Number.isFinite(g) || g === 0 || Math.abs(g) < 2 ** -126) continue;
    for (const p of [9, 12, 15, 16, 17, 18, 19, 20, 21]) {
      for (const t of [g.toPrecision(p), g.toExponential(p - 1)]) { texts.push(t); want.push(f32Bits(g)); }
    }
    texts.push(String(g)); want.push(f32Bits(g)); // JSON.stringify's shortest double text
  }
  for (let i = 0; i < 400; i++) {
    const f = randomFloat();
    const fb = f32Bits(f), g = f32Of((fb + 1) >>> 0);
    if (!Number.isFinite(g)) continue;
    const mid = (f + g) / 2; // exact in double
    const dv = new DataView(new ArrayBuffer(8));
    for (let k = -12; k <= 12; k += (i & 1) + 1) {
      dv.setFloat64(0, mid);
      dv.setBigUint64(0, dv.getBigUint64(0) + BigInt(k));
      const x = dv.getFloat64(0);
      for (const t of [x.toPrecision(17 + (i % 3)), x.toExponential(16 + (i % 4)), String(x)]) {
        const c = cmpExact(exactDecimal(t), exactDouble(mid));
        // below the midpoint: |f|; above: the next; on it: the even one
        want.push(c < 0 ? fb : c > 0 ? f32Bits(g) : (fb & 1 ? f32Bits(g) : fb));
        texts.push(t);
      }
    }
  }
  const body = `{"object":"list","data":[{"object":"embedding","index":0,"embedding":[${texts.join(',')}]}],"model":"m"}`;
  for (const m of [simd, scalar]) {
    const got = new Uint32Array(m.decodeOpenAI(body).matrix.buffer);
    assert.equal(got.length, texts.length);
    for (let i = 0; i < texts.length; i++)
      assert.equal(got[i], want[i], `${m.simd ? 'simd128' : 'scalar'}: ${texts[i]} -> 0x${got[i].toString(16)}, want 0x${want[i].toString(16)}`);
  }
});
