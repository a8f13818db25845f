// The optional Node-API addon (js/native/embd_napi.c, scripts/build-napi.sh) behind the same
// API: decodeOpenAI / decodeBase64Embedding of a load({backend: 'native'}) instance against
// the same oracles as openai.test.mjs (JSON.parse, Buffer base64, DataView reads), and
// against both WebAssembly modules: every result bit-identical, every error the same code,
// offset and message. EMBD_NAPI_ADDON names the built .node (scripts/test-js.sh builds it
// from the native build it is given); without one every test here skips loudly.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { relative } from 'node:path';
import { Worker } from 'node:worker_threads';
import fc from 'fast-check';
import { load, EmbeddingCodecError, DTYPES } from '../src/embd.js';
import { simd, scalar, sameBits, oracleToF32, randomBytes, OPENAI_ERRORS, floatBody, b64Body, randomRows } from './helpers.mjs';

const addon = process.env.EMBD_NAPI_ADDON;
const skip = !(addon && existsSync(addon)) &&
  `SKIP: no Node-API addon (scripts/test-js.sh NATIVE_BUILD_DIR builds it; EMBD_NAPI_ADDON=${addon ?? 'unset'})`;
if (skip) console.log(`# ${skip}`);
const native = skip ? null : await load({ backend: 'native', addon });
const wasms = [simd, scalar];

// The same body in every input form the API takes; the Uint8Array one sits at an odd
// offset of a larger buffer (read in place, so no alignment is assumed); the last one is
// shared memory (which the addon copies first).
function forms(body) {
  const bytes = Buffer.from(body);
  const big = new Uint8Array(bytes.length + 7); big.set(bytes, 3);
  const shared = new Uint8Array(new SharedArrayBuffer(bytes.length)); shared.set(bytes);
  return { string: body, buffer: bytes, arraybuffer: new TextEncoder().encode(body).buffer, offsetView: big.subarray(3, 3 + bytes.length), shared };
}
// Runs fn on a backend: {value} or {error: {code, offset, message, result}}.
function outcome(fn) {
  try { return { value: fn() }; } catch (e) {
    assert.ok(e instanceof EmbeddingCodecError, `not an EmbeddingCodecError: ${e?.stack ?? e}`);
    return { error: { code: e.code, offset: e.offset, message: e.message, result: e.result } };
  }
}
function sameOpenAI(a, b, what) {
  assert.deepEqual(a.error, b.error, what);
  if (a.error) return;
  const x = a.value, y = b.value;
  assert.equal(x.count, y.count, what); assert.equal(x.dims, y.dims, what);
  assert.equal(x.model, y.model, what); assert.deepEqual(x.usage, y.usage, what);
  assert.equal(sameBits(x.matrix, y.matrix), null, what);
}

test('the native instance says so; other functions stay on the module', { skip }, () => {
  assert.equal(native.backend, 'native');
  assert.equal(simd.backend, 'wasm');
  const frame = native.encodeEmbedding(new Float32Array([1, 2, 3]));
  assert.deepEqual([...native.decodeEmbedding(frame).vector], [1, 2, 3]);
  assert.equal(native.crc32(new TextEncoder().encode('123456789')), 0xcbf43926);
});

test('float bodies: JSON.parse oracle, bit-identical to both modules, every input form', { skip }, () => {
  for (const [count, dims] of [[1, 1], [1, 1536], [100, 1536], [3, 7]]) {
    const body = floatBody(randomRows(count, dims, count * dims + 1));
    const oracle = JSON.parse(body).data.map((d) => new Float32Array(d.embedding));
    const want = simd.decodeOpenAI(body);
    for (const [form, input] of Object.entries(forms(body))) {
      const r = native.decodeOpenAI(input);
      assert.equal(r.count, count); assert.equal(r.dims, dims);
      assert.equal(r.model, 'text-embedding-3-small');
      assert.deepEqual(r.usage, { prompt_tokens: 7, total_tokens: 7 });
      oracle.forEach((o, i) => assert.equal(sameBits(r.row(i), o), null, `${form} row ${i}`));
      assert.equal(r.rows().length, count);
      // the result owns exactly its values (allocated by the addon, decoded into)
      assert.equal(r.matrix.buffer.byteLength, count * dims * 4);
      sameOpenAI({ value: r }, { value: want }, `${count}x${dims} ${form}`);
    }
  }
  const rows = randomRows(5, 4, 9);
  const r = native.decodeOpenAI(floatBody(rows, { reverse: true }));
  rows.forEach((o, i) => assert.equal(sameBits(r.row(i), o), null, 'placed by index'));
  // one rounding (JSON.parse + Math.fround rounds twice here)
  assert.equal(new Uint32Array(native.decodeOpenAI('{"data":[{"index":0,"embedding":[7.038531e-26]}],"model":"m"}').matrix.buffer)[0], 0x15ae43fd);
});

test('base64 bodies and strings: Buffer oracle, NaN/-0/Inf bits, every form', { skip }, () => {
  const rows = randomRows(100, 1536, 5);
  rows[0][0] = NaN; rows[0][1] = -0; rows[0][2] = Infinity;
  const body = b64Body(rows);
  const oracle = JSON.parse(body).data.map((d) => { const b = Buffer.from(d.embedding, 'base64'); return new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.length)); });
  for (const [form, input] of Object.entries(forms(body))) {
    const r = native.decodeOpenAI(input);
    oracle.forEach((o, i) => assert.equal(sameBits(r.row(i), o), null, `${form} row ${i}`));
    assert.deepEqual(r.usage, { prompt_tokens: 1, total_tokens: 2 });
  }
  const one = JSON.parse(body).data[0].embedding;
  for (const [form, input] of Object.entries(forms(one))) {
    const v = native.decodeBase64Embedding(input);
    assert.equal(sameBits(v, oracle[0]), null, form);
    assert.equal(v.buffer.byteLength, 1536 * 4, 'exact allocation');
  }
  assert.equal(native.decodeBase64Embedding('').length, 0);
  assert.equal(native.decodeOpenAI('{"data":[],"model":"m"}').count, 0);
});

test('every dtype and byte order: DataView oracle; results and errors as the modules give them', { skip }, () => {
  for (const dt of DTYPES) {
    for (const bo of ['little', 'big']) {
      const per = { f32: 4, f16: 2, bf16: 2 }[dt] ?? 1;
      const wire = [randomBytes(64 * per, 11), randomBytes(64 * per, 12)];
      const body = `{"data":[${wire.map((w, i) => `{"index":${i},"embedding":"${Buffer.from(w).toString('base64')}"}`).join(',')}],"model":"m"}`;
      const opts = { dtype: dt, byteOrder: bo };
      const n = outcome(() => native.decodeOpenAI(body, opts));
      for (const m of wasms) sameOpenAI(n, outcome(() => m.decodeOpenAI(body, opts)), `${dt} ${bo}`);
      if (!n.error) wire.forEach((w, i) => assert.equal(sameBits(n.value.row(i), oracleToF32(w, dt, bo)), null, `${dt} ${bo} row ${i}`));
      const s = Buffer.from(wire[1]).toString('base64');
      const one = native.decodeBase64Embedding(s, opts);
      assert.equal(sameBits(one, oracleToF32(wire[1], dt, bo)), null, `${dt} ${bo} single`);
      assert.equal(one.buffer.byteLength, one.length * 4);
      // a length that is no whole number of elements: the same error everywhere
      if (per > 1) {
        const odd = Buffer.from(wire[1].subarray(0, 63 * per + 1)).toString('base64');
        const e = outcome(() => native.decodeBase64Embedding(odd, opts));
        assert.ok(e.error, `${dt} odd length`);
        for (const m of wasms) assert.deepEqual(e, outcome(() => m.decodeBase64Embedding(odd, opts)));
      }
    }
  }
});

test('errors: code, byte offset and message identical to both modules', { skip }, () => {
  for (const [body, code, offset] of OPENAI_ERRORS) {
    for (const [form, input] of Object.entries(forms(body))) {
      const n = outcome(() => native.decodeOpenAI(input));
      assert.ok(n.error, `${JSON.stringify(body)} ${form}: no error`);
      assert.equal(n.error.code, code, n.error.message);
      if (offset !== undefined) assert.equal(n.error.offset, offset, n.error.message);
      for (const m of wasms) assert.deepEqual(n, outcome(() => m.decodeOpenAI(input)), `${JSON.stringify(body)} ${form}`);
    }
  }
  const dimsBody = '{"data":[{"index":0,"embedding":[1,2]}]}';
  const d = outcome(() => native.decodeOpenAI(dimsBody, { dims: 3 }));
  assert.equal(d.error.code, 'OPENAI_DIMS');
  assert.deepEqual(d, outcome(() => simd.decodeOpenAI(dimsBody, { dims: 3 })));
  const strings = [['AA*AAAAAAAAAAAAA', 'BASE64_CHAR', 2], ['AAA', 'BASE64_LENGTH', 3], ['AAAAAAA=', 'BASE64_F32_LENGTH'],
    ['AA=AAAAAAAAAAAAA', 'BASE64_PADDING', 2], ['AAAAAB==', 'BASE64_TRAILING_BITS'], ['AAAA AAAAAAAAAAA', 'BASE64_CHAR', 4],
    ['AAAA\u00e9AAA', 'BASE64_LENGTH'], ['AAA\u0100', 'BASE64_LENGTH']];
  for (const [s, code, offset] of strings) {
    for (const [form, input] of Object.entries(forms(s))) {
      const n = outcome(() => native.decodeBase64Embedding(input));
      assert.equal(n.error?.code, code, `${JSON.stringify(s)} ${form}`);
      if (offset !== undefined) assert.equal(n.error.offset, offset);
      for (const m of wasms) assert.deepEqual(n, outcome(() => m.decodeBase64Embedding(input)), `${JSON.stringify(s)} ${form}`);
    }
  }
  // argument checks are the package's own, before either backend
  for (const bad of [42, null, {}]) {
    assert.deepEqual(outcome(() => native.decodeOpenAI(bad)), outcome(() => simd.decodeOpenAI(bad)));
    assert.deepEqual(outcome(() => native.decodeBase64Embedding(bad)), outcome(() => simd.decodeBase64Embedding(bad)));
  }
  assert.deepEqual(outcome(() => native.decodeOpenAI('{}', { dtype: 'f64' })), outcome(() => simd.decodeOpenAI('{}', { dtype: 'f64' })));
  // the addon's own checks, one helper for openai() and openaiAsync(): a thrown Error, never
  // a silent undefined (which a short argument list gave before)
  const body = '{"data":[{"index":0,"embedding":[1]}]}';
  for (const [name, extra] of [['openai', [['']]], ['openaiAsync', []]]) {
    const call = (...args) => native.napi[name](...args);
    assert.throws(() => call(body, 0, 0), TypeError, `${name}: too few arguments`);
    assert.throws(() => call(body, 'f32', 0, 0, ...extra), /dtype, order and dims are numbers/, name);
    assert.throws(() => call(42, 0, 0, 0, ...extra), TypeError, name);
  }
});

test('property: random text, bytes and JSON give the same outcome on the addon and the module', { skip }, () => {
  const json = fc.record({
    data: fc.array(fc.record({ index: fc.nat(3), embedding: fc.oneof(fc.array(fc.float({ noNaN: true, noDefaultInfinity: true }), { maxLength: 4 }), fc.base64String({ maxLength: 24 }), fc.constant(null)) }), { maxLength: 3 }),
    model: fc.string(), usage: fc.record({ prompt_tokens: fc.nat(), total_tokens: fc.nat() }),
  }).map((o) => JSON.stringify(o));
  fc.assert(fc.property(fc.oneof(fc.string(), fc.string({ unit: 'binary' }), fc.uint8Array({ maxLength: 200 }), fc.json(), json), (s) => {
    sameOpenAI(outcome(() => native.decodeOpenAI(s)), outcome(() => simd.decodeOpenAI(s)), JSON.stringify(s));
  }), { numRuns: 2000 });
  fc.assert(fc.property(fc.oneof(fc.base64String({ maxLength: 64 }), fc.string(), fc.uint8Array({ maxLength: 64 })), fc.constantFrom(...DTYPES), fc.constantFrom('little', 'big'), (s, dtype, byteOrder) => {
    const a = outcome(() => native.decodeBase64Embedding(s, { dtype, byteOrder }));
    const b = outcome(() => simd.decodeBase64Embedding(s, { dtype, byteOrder }));
    assert.deepEqual(a.error, b.error);
    if (!a.error) assert.equal(sameBits(a.value, b.value), null);
  }), { numRuns: 2000 });
});

// Bytes are read where they are. A 48 MiB body (JSON whitespace between two members:
// the decoder reads every byte, keeps nothing) raises the peak RSS by about its size when
// it is copied (the WebAssembly path must copy it into the module's memory: the check that
// this measurement sees a copy) and by much less when it is read in place (the addon).
test('bytes bodies are not copied (peak RSS: the addon vs the module)', { skip }, () => {
  const N = 48 << 20;
  const head = Buffer.from('{"data":[{"index":0,"embedding":[0.5]}],'), tail = Buffer.from('"model":"m"}');
  const body = Buffer.alloc(head.length + N + tail.length, 0x20);
  head.copy(body, 0); tail.copy(body, head.length + N);
  const wasm = scalar; // a module of its own size so far
  const rss = () => process.resourceUsage().maxRSS * 1024;
  const r0 = rss();
  assert.equal(native.decodeOpenAI(body).matrix[0], 0.5);
  const r1 = rss();
  assert.equal(wasm.decodeOpenAI(body).matrix[0], 0.5);
  const r2 = rss();
  const mb = (x) => `${(x / 2 ** 20).toFixed(1)} MiB`;
  assert.ok(r2 - r1 >= N * 0.9, `the copy into WebAssembly memory shows: +${mb(r2 - r1)}`);
  assert.ok(r1 - r0 < N / 4, `the addon read the ${mb(N)} body in place: peak +${mb(r1 - r0)}`);
});

test('backend choice: auto finds the addon, falls back without it; native fails loudly', { skip }, async () => {
  assert.equal((await load({ backend: 'auto', addon })).backend, 'native');
  // a relative path is relative to the working directory (not a package name for require)
  assert.equal((await load({ backend: 'native', addon: relative(process.cwd(), addon) || '.' })).backend, 'native');
  assert.equal((await load({ backend: 'auto', addon: '/nonexistent/embd-napi.node' })).backend, 'wasm');
  assert.equal((await load()).backend, 'wasm');
  await assert.rejects(load({ backend: 'native', addon: '/nonexistent/embd-napi.node' }), /cannot load the Node-API addon/);
  await assert.rejects(load({ backend: 'gpu' }), (e) => e instanceof EmbeddingCodecError && /unknown backend/.test(e.message));
});

test('the addon loads and decodes in a worker thread too (its state is per thread)', { skip }, async () => {
  const src = `
    import { parentPort, workerData } from 'node:worker_threads';
    const { load } = await import(workerData.url);
    const e = await load({ backend: 'native', addon: workerData.addon });
    const r = e.decodeOpenAI('{"data":[{"index":0,"embedding":"AACAPwAAAEA="}],"model":"w"}');
    let code = null;
    try { e.decodeBase64Embedding('AA*AAAAAAAAAAAAA'); } catch (err) { code = err.code + '@' + err.offset + ':' + (err instanceof (await import(workerData.url)).EmbeddingCodecError); }
    parentPort.postMessage({ backend: e.backend, v: [...r.matrix], model: r.model, code });`;
  const w = new Worker(new URL(`data:text/javascript,${encodeURIComponent(src)}`), { workerData: { url: new URL('../src/embd.js', import.meta.url).href, addon } });
  const msg = await new Promise((res, rej) => { w.once('message', res); w.once('error', rej); });
  await w.terminate();
  assert.deepEqual(msg, { backend: 'native', v: [1, 2], model: 'w', code: 'BASE64_CHAR@2:true' });
  // and the main thread's instance still works after the worker's environment went away
  assert.deepEqual([...native.decodeBase64Embedding('AACAPw==')], [1]);
});

test('decodeOpenAIAsync: the same results and errors as decodeOpenAI, calls may overlap', { skip }, async () => {
  const bodies = [floatBody(randomRows(3, 7, 1)), b64Body(randomRows(4, 16, 2)), '{"data":[{"index":0,"embedding":[1,x]}]}',
    '{"data":[{"index":0,"embedding":"AAAA*AAAAAAAAAAA"}]}', '{"model":"\u00e9","data":[]}'];
  const settle = (p) => p.then((value) => ({ value }), (e) => {
    assert.ok(e instanceof EmbeddingCodecError, String(e));
    return { error: { code: e.code, offset: e.offset, message: e.message, result: e.result } };
  });
  const all = await Promise.all(bodies.flatMap((b) => Object.values(forms(b)).map((input) => settle(native.decodeOpenAIAsync(input)))));
  let k = 0;
  for (const b of bodies) {
    for (const [form, input] of Object.entries(forms(b))) {
      const got = all[k++];
      sameOpenAI(got, outcome(() => simd.decodeOpenAI(input)), `${JSON.stringify(b).slice(0, 40)} ${form}`);
      if (!got.error) sameOpenAI(got, { value: await simd.decodeOpenAIAsync(input) }, 'the module\'s async form');
    }
  }
  const dims = await settle(native.decodeOpenAIAsync('{"data":[{"index":0,"embedding":[1,2]}]}', { dims: 3 }));
  assert.equal(dims.error.code, 'OPENAI_DIMS');
  // the body is copied at the call: changing the caller's bytes afterwards changes nothing
  const bytes = Buffer.from('{"data":[{"index":0,"embedding":[0.5]}],"model":"m"}');
  const p = native.decodeOpenAIAsync(bytes);
  bytes.fill(0x20);
  assert.equal((await p).matrix[0], 0.5);
  await assert.rejects(native.decodeOpenAIAsync(42), EmbeddingCodecError);
});

// Liveness, not speed: a setImmediate chain counts the event loop's turns while a large body
// decodes. The synchronous call holds the loop (no turn can happen inside it); the async one
// must let it turn at least once before it settles (a 1000 x 1536 float body takes ~50 ms
// to decode, a turn microseconds; with 100 rows, ~5 ms, Bun under load once resolved the call
// before its next turn). One row's text repeated: cheap to make.
test('decodeOpenAIAsync keeps the event loop running while it decodes', { skip }, async () => {
  const row = floatBody(randomRows(1, 1536, 77)).match(/\{"object":"embedding".*?\]\}/)[0];
  const body = `{"data":[${Array.from({ length: 1000 }, (_, i) => row.replace('"index":0', `"index":${i}`)).join(',')}]}`;
  let turns = 0, live = true;
  const spin = () => { if (live) { turns++; setImmediate(spin); } };
  setImmediate(spin);
  const before = turns;
  native.decodeOpenAI(body);
  assert.equal(turns, before, 'the sync call holds the loop');
  const start = turns;
  const r = await native.decodeOpenAIAsync(body);
  live = false;
  assert.equal(r.count, 1000);
  assert.ok(turns - start >= 1, `the loop turned ${turns - start} times while the body decoded`);
});
