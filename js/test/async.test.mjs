// decodeOpenAIAsync on the WebAssembly backend: decodeOpenAI in a worker (js/src/worker.js)
// holding its own instance of the same compiled module. Results bit-identical to the
// synchronous call and to the oracles (JSON.parse + Float32Array, Buffer base64 + DataView
// reads), errors identical (name, code, offset, result, message), the event loop turning
// while a large body decodes, many calls in flight each settling with its own outcome, the
// caller's buffer left alone, a worker that dies or is closed rejecting its calls and being
// replaced, the on-loop fallback, and a process that exits by itself after using it.
// About 2-4 s under each Node on a loaded 2-core machine (most of it the 20 MB body of the
// event-loop test).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { load, EmbeddingCodecError, DTYPES } from '../src/embd.js';
import { sameBits, oracleToF32, randomBytes, floatBody, randomRows } from './helpers.mjs';

// Own instances (helpers' are shared with other tests): every body goes through the worker
// (workerMinBytes 0), whatever its size.
const mods = [await load({ simd: true }), await load({ simd: false })];
for (const m of mods) m.workerMinBytes = 0;

function wireBody(wires) {
  return `{"data":[${wires.map((w, i) => `{"index":${i},"embedding":"${Buffer.from(w).toString('base64')}"}`).join(',')}],"model":"m"}`;
}
// The input forms: a string, a Buffer, a Uint8Array at an odd offset of a larger buffer, an ArrayBuffer.
function forms(body) {
  const bytes = Buffer.from(body);
  const big = new Uint8Array(bytes.length + 7); big.set(bytes, 3);
  return { string: body, buffer: bytes, offsetView: big.subarray(3, 3 + bytes.length), arraybuffer: new TextEncoder().encode(body).buffer };
}
// {value} or {error} of a call, sync or async.
async function outcome(fn) {
  try { return { value: await fn() }; } catch (e) { return { error: e }; }
}
function sameOutcome(got, want, what) {
  if (want.error) {
    assert.ok(got.error, `${what}: resolved where the sync call threw ${want.error.code}`);
    assert.ok(got.error instanceof EmbeddingCodecError, `${what}: ${got.error.stack}`);
    for (const k of ['name', 'code', 'offset', 'result', 'message']) assert.equal(got.error[k], want.error[k], `${what}: ${k}`);
    return;
  }
  assert.equal(got.error, undefined, `${what}: ${got.error?.message}`);
  const x = got.value, y = want.value;
  assert.equal(x.count, y.count, what); assert.equal(x.dims, y.dims, what);
  assert.equal(x.model, y.model, what); assert.deepEqual(x.usage, y.usage, what);
  assert.ok(x.matrix instanceof Float32Array, what);
  assert.equal(sameBits(x.matrix, y.matrix), null, what);
  assert.equal(x.rows().length, x.count, what);
  for (let i = 0; i < x.count; i++) assert.equal(sameBits(x.row(i), y.row(i)), null, `${what} row(${i})`);
  assert.throws(() => x.row(x.count), RangeError);
}

test('float bodies: JSON.parse + Float32Array and the sync call, both modules, every input form', async () => {
  for (const [count, dims] of [[1, 1], [3, 7], [1, 1536], [40, 1536]]) {
    const body = floatBody(randomRows(count, dims, count * dims));
    const oracle = JSON.parse(body).data.map((d) => Float32Array.from(d.embedding));
    for (const m of mods) {
      const want = await outcome(() => m.decodeOpenAI(body));
      for (const [form, input] of Object.entries(forms(body))) {
        const got = await outcome(() => m.decodeOpenAIAsync(input));
        sameOutcome(got, want, `${count}x${dims} ${form} simd=${m.simd}`);
        assert.deepEqual(got.value.usage, { prompt_tokens: 7, total_tokens: 7 });
        oracle.forEach((o, i) => assert.equal(sameBits(got.value.row(i), o), null, `${form} row ${i}`));
      }
      assert.equal(m.workerState, 'running');
    }
  }
});

test('base64 bodies, every dtype and byte order: Buffer base64 + DataView oracle and the sync call', async () => {
  for (const dt of DTYPES) {
    for (const bo of ['little', 'big']) {
      const per = { f32: 4, f16: 2, bf16: 2 }[dt] ?? 1;
      const wires = [randomBytes(96 * per, 21), randomBytes(96 * per, 22), randomBytes(96 * per, 23)];
      const body = wireBody(wires);
      for (const m of mods) {
        const want = await outcome(() => m.decodeOpenAI(body, { dtype: dt, byteOrder: bo }));
        for (const [form, input] of Object.entries(forms(body))) {
          const got = await outcome(() => m.decodeOpenAIAsync(input, { dtype: dt, byteOrder: bo }));
          sameOutcome(got, want, `${dt} ${bo} ${form} simd=${m.simd}`);
          if (got.value) {
            // Buffer.from(s, 'base64') then the DataView reads of the dtype
            JSON.parse(body).data.forEach((d, i) => assert.equal(sameBits(got.value.row(i),
              oracleToF32(Buffer.from(d.embedding, 'base64'), dt, bo)), null, `${dt} ${bo} ${form} row ${i}`));
          }
        }
      }
    }
  }
  // f32 must decode here (a decoder refusing everything would pass the loop above)
  const r = await mods[0].decodeOpenAIAsync(wireBody([randomBytes(64, 5)]));
  assert.equal(r.count, 1); assert.equal(r.dims, 16);
});

test('errors: the same EmbeddingCodecError (name, code, offset, result, message) as the sync call', async () => {
  const cases = [
    ['{"data":[{"index":0,"embedding":[1,2]}],"model":"m"', 'OPENAI_JSON'],
    ['{"data":[{"index":0,"embedding":[1,x]}]}', 'OPENAI_JSON'],
    ['{"data":[{"index":0,"embedding":"AAAA*AAAAAAAAAAA"}]}', 'BASE64_CHAR'],
    ['{"data":[{"index":0,"embedding":"AAA="}]}', 'BASE64_F32_LENGTH'],
    ['{"data":[{"index":0,"embedding":[1,2]},{"index":1,"embedding":[1]}]}', 'OPENAI_DIMS'],
    ['{"data":[{"index":0,"embedding":[1]},{"index":0,"embedding":[1]}]}', 'OPENAI_INDEX'],
    ['{"data":[{"index":0,"embedding":[1e39]}]}', 'OPENAI_SHAPE'],
    ['{"model":"\u00e9","data":[{"index":0,"embedding":[1,x]}]}', 'OPENAI_JSON'],
    [floatBody(randomRows(50, 1536, 3)).slice(0, -40), 'OPENAI_JSON'], // a large body cut short
  ];
  for (const m of mods) {
    for (const [body, code] of cases) {
      const want = await outcome(() => m.decodeOpenAI(body));
      assert.equal(want.error?.code, code, body.slice(0, 60));
      for (const [form, input] of Object.entries(forms(body))) sameOutcome(await outcome(() => m.decodeOpenAIAsync(input)), want, `${code} ${form}`);
    }
    const dims = '{"data":[{"index":0,"embedding":[1,2]}]}';
    sameOutcome(await outcome(() => m.decodeOpenAIAsync(dims, { dims: 3 })), await outcome(() => m.decodeOpenAI(dims, { dims: 3 })), 'dims option');
    // arguments are checked as the sync call checks them
    for (const [body, opts] of [[42, {}], ['{}', { dtype: 'f64' }], ['{}', { byteOrder: 'middle' }]]) {
      sameOutcome(await outcome(() => m.decodeOpenAIAsync(body, opts)), await outcome(() => m.decodeOpenAI(body, opts)), `argument ${JSON.stringify(opts)}`);
    }
  }
});

test('50 calls in flight, valid and invalid mixed: each settles with its own outcome', async () => {
  const bodies = Array.from({ length: 50 }, (_, i) => {
    const b = i % 5 === 4 ? wireBody([randomBytes(4 * (i + 1), i)]) : floatBody(randomRows(1 + (i % 4), 1 + i * 3, i + 100), { model: `model-${i}` });
    return i % 3 === 2 ? b.slice(0, b.length - 1 - (i % 7)) : i % 2 ? Buffer.from(b) : b;
  });
  for (const m of mods) {
    const got = await Promise.all(bodies.map((b) => outcome(() => m.decodeOpenAIAsync(b))));
    let bad = 0;
    for (let i = 0; i < bodies.length; i++) {
      const want = await outcome(() => m.decodeOpenAI(bodies[i]));
      if (want.error) bad++;
      sameOutcome(got[i], want, `call ${i}`);
    }
    assert.ok(bad >= 10 && bad <= 40, `${bad} of 50 invalid`);
  }
});

test('the caller\'s buffer: not detached, unchanged, and free to change once the call is made', async () => {
  const body = floatBody(randomRows(20, 64, 8));
  for (const [form, input] of Object.entries(forms(body))) {
    if (form === 'string') continue;
    const view = input instanceof ArrayBuffer ? new Uint8Array(input) : input;
    const copy = Uint8Array.from(view);
    const p = mods[0].decodeOpenAIAsync(input);
    assert.equal(view.byteLength, copy.length, `${form}: not detached`);
    assert.deepEqual(Uint8Array.from(view), copy, `${form}: unchanged`);
    view.fill(0x20); // the caller reuses its buffer at once: the call decodes what it was given
    const r = await p;
    assert.equal(sameBits(r.matrix, mods[0].decodeOpenAI(body).matrix), null, form);
    view.set(copy);
    assert.equal((await mods[0].decodeOpenAIAsync(input)).count, 20, `${form}: usable again`);
  }
});

test('the input buffer handed back and reused: bodies of changing sizes and encodings in sequence', async () => {
  // each call may reuse the buffer the last one gave back (DecodeWorker.input): smaller,
  // larger, a string whose UTF-8 is longer than its length (which does not fit a buffer
  // sized for the ASCII body before it), bytes after strings
  const m = mods[0];
  const ascii = floatBody(randomRows(8, 300, 31));
  const wide = floatBody(randomRows(8, 300, 31), { model: '\u00e9\u00e9\u00e9\u4e2d'.repeat(400) });
  const seq = [ascii, floatBody(randomRows(2, 10, 32)), wide, Buffer.from(ascii), ascii.slice(0, -2), wide, Buffer.from(floatBody(randomRows(30, 300, 33))), ascii];
  for (const [i, b] of seq.entries()) sameOutcome(await outcome(() => m.decodeOpenAIAsync(b)), await outcome(() => m.decodeOpenAI(b)), `call ${i}`);
  assert.ok(m.decodeWorker.spare instanceof ArrayBuffer, 'a buffer was handed back');
});

// Liveness, not speed: a setImmediate chain counts the event loop's turns while a 20 MB body
// decodes (~100+ ms). The sync call holds the loop (0 turns inside it); the async call must
// let it turn many times before it settles (a turn takes microseconds).
test('the event loop keeps turning while a 20 MB body decodes in the worker', async () => {
  const m = await load({ simd: true }); // default workerMinBytes: a body this size goes to the worker
  const body = floatBody(randomRows(650, 1536, 77));
  assert.ok(body.length > 20e6, `${body.length} bytes`);
  let turns = 0, live = true;
  const spin = () => { if (live) { turns++; setImmediate(spin); } };
  setImmediate(spin);
  const before = turns;
  const want = m.decodeOpenAI(body);
  assert.equal(turns, before, 'the sync call holds the loop');
  const p = m.decodeOpenAIAsync(body);
  const start = turns;
  const r = await p;
  live = false;
  assert.equal(sameBits(r.matrix, want.matrix), null);
  assert.ok(turns - start >= 10, `the loop turned ${turns - start} times while the body decoded`);
  // on the loop (worker: false): not one turn while it decodes (a smaller body will do)
  const off = await load({ simd: true, worker: false });
  assert.equal(off.workerState, 'off');
  const small = floatBody(randomRows(60, 1536, 78));
  live = true; turns = 0; setImmediate(spin);
  const q = off.decodeOpenAIAsync(small);
  const atCall = turns;
  assert.equal(sameBits((await q).matrix, off.decodeOpenAI(small).matrix), null);
  live = false;
  assert.equal(atCall, 0, 'worker: false decodes inside the call');
  await m.close();
});

test('small bodies decode on the loop under workerMinBytes; workerState says what happened', async () => {
  const m = await load({ simd: true });
  assert.equal(m.workerState, 'idle');
  assert.equal(m.workerMinBytes, 65536);
  const r = await m.decodeOpenAIAsync('{"data":[{"index":0,"embedding":[0.5]}],"model":"m"}');
  assert.equal(r.matrix[0], 0.5);
  assert.equal(m.workerState, 'idle', 'no worker for a 50-byte body');
  await m.decodeOpenAIAsync(floatBody(randomRows(4, 1536, 1)));
  assert.equal(m.workerState, 'running');
  await m.close();
  assert.equal(m.workerState, 'idle');
});

test('a worker that dies rejects its calls and is replaced; close() rejects calls in flight', async () => {
  const m = await load({ simd: true });
  m.workerMinBytes = 0;
  const body = floatBody(randomRows(20, 1536, 9));
  const want = m.decodeOpenAI(body);
  await m.decodeOpenAIAsync(body); // the worker is up
  // kill it from outside (as an out-of-memory abort would end it), calls in flight. The
  // worker runs on its own thread: if this one is descheduled between the posts and
  // terminate(), the worker may answer the first call (it is then right); the second is
  // queued behind the first's ~1 ms decode and dies with it, so at least one rejects.
  const calls = [m.decodeOpenAIAsync(body), m.decodeOpenAIAsync(body)];
  m.decodeWorker.w.terminate(); // the worker itself, not close(): embd sees an exit it did not ask for
  const got = await Promise.allSettled(calls);
  for (const g of got) {
    if (g.status === 'fulfilled') assert.equal(sameBits(g.value.matrix, want.matrix), null, 'a call answered before the worker died');
    else assert.match(g.reason.message, /the decodeOpenAIAsync worker died/);
  }
  assert.ok(got.some((g) => g.status === 'rejected'), 'no call in flight was rejected');
  assert.equal(sameBits((await m.decodeOpenAIAsync(body)).matrix, want.matrix), null, 'a new worker');
  const pending = assert.rejects(m.decodeOpenAIAsync(body), /closed while decodeOpenAIAsync was running/);
  await m.close();
  await pending;
  assert.equal(sameBits((await m.decodeOpenAIAsync(body)).matrix, want.matrix), null, 'after close, another worker');
  await m.close();
});

test('a worker that cannot start: the calls decode on the loop and workerState says unavailable', async () => {
  const m = await load({ simd: true });
  m.workerMinBytes = 0;
  m.module = {}; // what the worker is sent to instantiate: WebAssembly.compile refuses it
  const body = floatBody(randomRows(3, 5, 4));
  const got = await Promise.all([m.decodeOpenAIAsync(body), m.decodeOpenAIAsync(Buffer.from(body))]);
  for (const r of got) assert.equal(sameBits(r.matrix, m.decodeOpenAI(body).matrix), null);
  assert.equal(m.workerState, 'unavailable');
  assert.ok(m.workerError instanceof Error);
  await assert.rejects(m.decodeOpenAIAsync('{"data":[1'), EmbeddingCodecError);
});

test('a process that used it exits by itself (the idle worker holds nothing open)', () => {
  const url = new URL('../src/embd.js', import.meta.url).href;
  const src = `import { init, decodeOpenAIAsync } from ${JSON.stringify(url)};
const e = await init();
const body = JSON.stringify({ data: [{ index: 0, embedding: Array.from({ length: 20000 }, (_, i) => i / 8) }], model: 'm' });
const r = await decodeOpenAIAsync(body);
console.log(r.count, r.dims, r.matrix[9], e.workerState);`;
  const t0 = Date.now();
  const c = spawnSync(process.execPath, ['--input-type=module', '-e', src], { encoding: 'utf8', timeout: 20000 });
  assert.equal(c.signal, null, `killed after ${Date.now() - t0} ms: it did not exit by itself`);
  assert.equal(c.status, 0, c.stderr);
  assert.equal(c.stdout.trim(), '1 20000 1.125 running');
});
