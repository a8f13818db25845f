// node js/bench.mjs [--native PATH_TO_embd] [--rounds N] [--addon PATH_TO_embd-napi.node]
//
// Issue 34's speed section, one process, the same inputs for every contender, contenders
// interleaved within each round, medians over rounds, printed as ratios (what the targets
// are stated in). Not a test: nothing here asserts a time. Pin it for steadier numbers:
//   taskset -c 1 node js/bench.mjs --native build/release/embd
import { cpus, loadavg, availableParallelism } from 'node:os';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import * as seed from '../tests/interop/seed_codec.mjs';
import { load, EmbeddingCodecError } from './src/embd.js';

const args = process.argv.slice(2);
const opt = (name, dflt) => { const i = args.indexOf(name); return i >= 0 ? args[i + 1] : dflt; };
const ROUNDS = Number(opt('--rounds', 15));
const nativeEmbd = opt('--native', null);

const simd = await load({ simd: true });
const scalar = await load({ simd: false });

let s = 12345;
const rnd = () => { s ^= s << 13; s >>>= 0; s ^= s >>> 17; s ^= s << 5; s >>>= 0; return s; };
const rows = (n, d) => Array.from({ length: n }, () => Float32Array.from({ length: d }, () => ((rnd() / 2 ** 32) - 0.5) * 0.2));

// Times fn over enough calls to take ~min ms; returns ns per call.
function time(fn, minMs = 20) {
  let n = 1;
  for (;;) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < n; i++) fn();
    const dt = Number(process.hrtime.bigint() - t0) / 1e6;
    if (dt >= minMs) return (dt * 1e6) / n;
    n = Math.max(n * 2, Math.ceil(n * (minMs * 1.2) / Math.max(dt, 0.01)));
  }
}
const median = (a) => { const b = [...a].sort((x, y) => x - y); return b[b.length >> 1]; };
// contenders: {name: fn}; interleaved each round; returns {name: median ns}
function race(contenders) {
  const res = Object.fromEntries(Object.keys(contenders).map((k) => [k, []]));
  for (const f of Object.values(contenders)) f(); // warm up (and JIT)
  for (let r = 0; r < ROUNDS; r++) for (const [k, f] of Object.entries(contenders)) res[k].push(time(f));
  return Object.fromEntries(Object.entries(res).map(([k, v]) => [k, median(v)]));
}
const us = (ns) => `${(ns / 1000).toFixed(2)} us`;
let sink = 0;
function line(title, target, ours, base, baseName, perItems = 1) {
  const ratio = base / ours;
  const held = target ? (ratio >= target ? 'HOLDS' : 'MISSES') : '';
  console.log(`${title.padEnd(46)} embd ${us(ours / perItems).padStart(11)}  ${baseName} ${us(base / perItems).padStart(11)}  ${ratio.toFixed(2)}x${target ? `  (target >= ${target}x: ${held})` : ''}`);
}

console.log(`CPU: ${cpus()[0]?.model ?? '?'} (${cpus().length} logical); Node ${process.version}; SIMD128 module: ${simd.simd}; load average ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
console.log(`medians of ${ROUNDS} interleaved rounds; times per item (per vector); ratio = baseline time / embd time\n`);

for (const [count, dims] of [[100, 1536], [1, 1536]]) {
  const data = rows(count, dims);
  console.log(`-- ${count} x ${dims}`);
  // float-array body (the Vercel AI SDK's encoding_format "float"), two realistic texts:
  // JSON.stringify of the float32 values widened to double (up to 17 significant digits:
  // what vLLM's .tolist() and Node servers print; issue 34's target is judged on this
  // line), and the shortest float32 round trip (~9 significant digits, as OpenAI's API
  // prints).
  const floatBody = (rowsText) => JSON.stringify({ object: 'list', data: rowsText.map((r, i) => ({ object: 'embedding', index: i, embedding: r })), model: 'text-embedding-3-small', usage: { prompt_tokens: 8, total_tokens: 8 } });
  const fbody = floatBody(data.map((r) => Array.from(r)));
  const shortest = (x) => { for (let p = 1; ; p++) { const t = x.toPrecision(p); if (Math.fround(Number(t)) === x) return Number(t); } };
  const sbody = floatBody(data.map((r) => Array.from(r, shortest)));
  let r = race({
    embd: () => { sink += simd.decodeOpenAI(fbody).count; },
    json: () => { const j = JSON.parse(fbody); for (const d of j.data) sink += Float32Array.from(d.embedding).length; },
    embdShort: () => { sink += simd.decodeOpenAI(sbody).count; },
    jsonShort: () => { const j = JSON.parse(sbody); for (const d of j.data) sink += Float32Array.from(d.embedding).length; },
  });
  line('float body (17 digits): vs JSON.parse+F32.from', 4, r.embd, r.json, 'JSON.parse', count);
  line('float body (~9 digits): vs JSON.parse+F32.from', 0, r.embdShort, r.jsonShort, 'JSON.parse', count);
  // base64 body (openai-node's default)
  const b64 = (f) => Buffer.from(f.buffer, f.byteOffset, f.byteLength).toString('base64');
  const bbody = JSON.stringify({ object: 'list', data: data.map((r, i) => ({ object: 'embedding', index: i, embedding: b64(r) })), model: 'text-embedding-3-small', usage: { prompt_tokens: 8, total_tokens: 8 } });
  r = race({
    embd: () => { sink += simd.decodeOpenAI(bbody).count; },
    openaiNode: () => { const j = JSON.parse(bbody); for (const d of j.data) { const b = Buffer.from(d.embedding, 'base64'); sink += Array.from(new Float32Array(b.buffer, b.byteOffset, b.length / 4)).length; } },
    view: () => { const j = JSON.parse(bbody); for (const d of j.data) { const b = Buffer.from(d.embedding, 'base64'); sink += new Float32Array(b.buffer, b.byteOffset, b.length / 4).length; } },
  });
  line('base64 body: vs openai-node (Buffer+Array.from)', 10, r.embd, r.openaiNode, 'openai-node', count);
  line('base64 body: vs Buffer.from + Float32Array view', 1.0, r.embd, r.view, 'Buffer+view', count);
  // one base64 string alone (no JSON around it)
  const one = b64(data[0]);
  r = race({
    embd: () => { sink += simd.decodeBase64Embedding(one).length; },
    view: () => { const b = Buffer.from(one, 'base64'); sink += new Float32Array(b.buffer, b.byteOffset, b.length / 4).length; },
  });
  if (count === 1) line('one base64 string: decodeBase64Embedding vs view', 0, r.embd, r.view, 'Buffer+view');
  // float16 base64 body: a DataView loop reads it in JavaScript
  const f16 = data.map((v) => Buffer.from(simd.fromF32(v, 'f16', 'little')));
  const hbody = JSON.stringify({ data: f16.map((b, i) => ({ index: i, embedding: b.toString('base64') })), model: 'm' });
  const half = (h) => { const e = (h >> 10) & 31, m = h & 1023, sg = h & 0x8000 ? -1 : 1; return e === 31 ? (m ? NaN : sg * Infinity) : e === 0 ? sg * m * 2 ** -24 : sg * (1 + m / 1024) * 2 ** (e - 15); };
  r = race({
    embd: () => { sink += simd.decodeOpenAI(hbody, { dtype: 'f16' }).count; },
    dataview: () => {
      const j = JSON.parse(hbody);
      for (const d of j.data) {
        const b = Buffer.from(d.embedding, 'base64');
        const dv = new DataView(b.buffer, b.byteOffset, b.length);
        const out = new Float32Array(b.length / 2);
        for (let i = 0; i < out.length; i++) out[i] = half(dv.getUint16(i * 2, true));
        sink += out.length;
      }
    },
  });
  line('float16 base64 body: vs a DataView loop', 10, r.embd, r.dataview, 'DataView', count);
  // decodeEmbedding vs the seed's own
  const frame = seed.encodeEmbedding(data[0]);
  r = race({
    embd: () => { sink += simd.decodeEmbedding(frame).dimensions; },
    seed: () => { sink += seed.decodeEmbedding(frame).dimensions; },
  });
  if (count === 1) line('decodeEmbedding vs the seed decoder', 0.9, r.embd, r.seed, 'seed');
  const batch = seed.encodeEmbedding && simd.encodeBatch(data);
  r = race({
    embd: () => { for (const f of simd.decodeBatch(batch)) sink += f.dimensions; },
    seed: () => { for (const f of seed.decodeBatch(batch)) sink += f.dimensions; },
  });
  if (count > 1) line('decodeBatch vs the seed decodeBatch', 0, r.embd, r.seed, 'seed', count);
  console.log();
}

// ---- the Node-API addon (js/native/, scripts/build-napi.sh): per function, the addon vs
// the SIMD128 module vs the baselines, interleaved. Its rule (issue 34): the addon serves a
// function only where it is >= 1.5x the WebAssembly path on these batches.
{
  const addonPath = opt('--addon', undefined);
  let nat = null;
  try { nat = await load({ simd: true, backend: 'native', addon: addonPath }); } catch (e) { console.log(`-- addon: not measured (${e.message.split('\n')[0]}; --addon PATH or scripts/build-napi.sh)\n`); }
  if (nat) {
    console.log('-- Node-API addon vs the SIMD128 module (ratio = module time / addon time; baselines as above)');
    const b64 = (f) => Buffer.from(f.buffer, f.byteOffset, f.byteLength).toString('base64');
    const row = (title, r, base, baseName, per) => console.log(`${title.padEnd(40)} addon ${us(r.native / per).padStart(10)}  wasm ${us(r.wasm / per).padStart(10)}  addon/wasm ${(r.wasm / r.native).toFixed(2)}x` +
      (base ? `  ${baseName} ${us(r[base] / per).padStart(10)} (${(r[base] / r.native).toFixed(2)}x)` : ''));
    for (const [count, dims] of [[100, 1536], [1, 1536]]) {
      const data = rows(count, dims);
      const fbody = JSON.stringify({ object: 'list', data: data.map((v, i) => ({ object: 'embedding', index: i, embedding: Array.from(v) })), model: 'text-embedding-3-small', usage: { prompt_tokens: 8, total_tokens: 8 } });
      const bbody = JSON.stringify({ object: 'list', data: data.map((v, i) => ({ object: 'embedding', index: i, embedding: b64(v) })), model: 'text-embedding-3-small', usage: { prompt_tokens: 8, total_tokens: 8 } });
      const bbytes = Buffer.from(bbody), fbytes = Buffer.from(fbody);
      const hbody = JSON.stringify({ data: data.map((v, i) => ({ index: i, embedding: Buffer.from(simd.fromF32(v, 'f16', 'little')).toString('base64') })), model: 'm' });
      let r = race({
        wasm: () => { sink += simd.decodeOpenAI(fbody).count; },
        native: () => { sink += nat.decodeOpenAI(fbody).count; },
        json: () => { const j = JSON.parse(fbody); for (const d of j.data) sink += Float32Array.from(d.embedding).length; },
      });
      row(`${count}x${dims} float body (string)`, r, 'json', 'JSON.parse+F32.from', count);
      r = race({ wasm: () => { sink += simd.decodeOpenAI(fbytes).count; }, native: () => { sink += nat.decodeOpenAI(fbytes).count; } });
      row(`${count}x${dims} float body (Buffer)`, r, null, '', count);
      r = race({
        wasm: () => { sink += simd.decodeOpenAI(bbody).count; },
        native: () => { sink += nat.decodeOpenAI(bbody).count; },
        view: () => { const j = JSON.parse(bbody); for (const d of j.data) { const b = Buffer.from(d.embedding, 'base64'); sink += new Float32Array(b.buffer, b.byteOffset, b.length / 4).length; } },
        openaiNode: () => { const j = JSON.parse(bbody); for (const d of j.data) { const b = Buffer.from(d.embedding, 'base64'); sink += Array.from(new Float32Array(b.buffer, b.byteOffset, b.length / 4)).length; } },
      });
      row(`${count}x${dims} base64 body (string)`, r, 'view', 'Buffer+view', count);
      row(`${count}x${dims} base64 body (string)`, r, 'openaiNode', 'openai-node', count);
      r = race({ wasm: () => { sink += simd.decodeOpenAI(bbytes).count; }, native: () => { sink += nat.decodeOpenAI(bbytes).count; } });
      row(`${count}x${dims} base64 body (Buffer)`, r, null, '', count);
      r = race({ wasm: () => { sink += simd.decodeOpenAI(hbody, { dtype: 'f16' }).count; }, native: () => { sink += nat.decodeOpenAI(hbody, { dtype: 'f16' }).count; } });
      row(`${count}x${dims} float16 base64 body (string)`, r, null, '', count);
      if (count === 1) {
        const one = b64(data[0]);
        r = race({
          wasm: () => { sink += simd.decodeBase64Embedding(one).length; },
          native: () => { sink += nat.decodeBase64Embedding(one).length; },
          view: () => { const b = Buffer.from(one, 'base64'); sink += new Float32Array(b.buffer, b.byteOffset, b.length / 4).length; },
        });
        row('one base64 string: decodeBase64Embedding', r, 'view', 'Buffer+view', 1);
      }
    }
    console.log();
  }
}

// ---- decodeOpenAIAsync on the module: the worker (js/src/worker.js) vs decodeOpenAI on the
// event loop. Per call: time (sequential awaits) and the longest the loop went without
// turning during the calls: the largest gap between ticks of a 1 ms setInterval (1 ms
// when nothing blocks it; a timer, not a setImmediate spin, so the measuring does not take
// the CPU the worker needs; between back-to-back synchronous calls a tick can be skipped, so
// the sync gap reads up to two calls: "held" is the call's own time). Then the crossover:
// small bodies forced through the worker (workerMinBytes 0), worker time over sync time,
// which is where embd.js's WORKER_MIN_BYTES comes from.
{
  const b64 = (f) => Buffer.from(f.buffer, f.byteOffset, f.byteLength).toString('base64');
  const body = (data, enc) => JSON.stringify({ object: 'list', data: data.map((v, i) => ({ object: 'embedding', index: i, embedding: enc(v) })), model: 'text-embedding-3-small', usage: { prompt_tokens: 8, total_tokens: 8 } });
  const w = await load({ simd: true });
  const gapMeter = () => {
    let last = performance.now(), max = 0;
    const t = setInterval(() => { const n = performance.now(); max = Math.max(max, n - last); last = n; }, 1);
    return () => { clearInterval(t); return Math.max(max, performance.now() - last); };
  };
  // For `calls` sequential calls of fn: ms per call, the max gap (ms), the loop's busy time
  // per call (event-loop utilisation's active time: the timer ticks and the await included),
  // and the median time the call itself held the loop before returning its promise (ms)
  async function timed(fn, calls) {
    const stop = gapMeter();
    const elu = performance.eventLoopUtilization();
    const held = [];
    const t0 = performance.now();
    for (let i = 0; i < calls; i++) {
      const c0 = performance.now();
      const p = fn();
      held.push(performance.now() - c0);
      await p;
    }
    const dt = (performance.now() - t0) / calls;
    return [dt, stop(), performance.eventLoopUtilization(elu).active / calls, median(held)];
  }
  async function asyncRace(b, calls) {
    const syncCall = () => { sink += w.decodeOpenAI(b).count; return new Promise(setImmediate); };
    const workerCall = async () => { sink += (await w.decodeOpenAIAsync(b)).count; };
    await syncCall(); await workerCall(); // warm up (and start the worker)
    const res = { sync: [], worker: [], syncGap: [], workerGap: [], syncBusy: [], workerBusy: [], syncHeld: [], workerHeld: [] };
    for (let r = 0; r < ROUNDS; r++) {
      for (const k of ['sync', 'worker']) {
        const [t, g, b, h] = await timed(k === 'sync' ? syncCall : workerCall, calls);
        res[k].push(t); res[`${k}Gap`].push(g); res[`${k}Busy`].push(b); res[`${k}Held`].push(h);
      }
    }
    // gaps: the least disturbed round's (other processes taking the CPU add ms at random)
    return Object.fromEntries(Object.entries(res).map(([k, v]) => [k, k.endsWith('Gap') ? Math.min(...v) : median(v)]));
  }
  const idle = await timed(() => new Promise((r) => setTimeout(r, 100)), 2);
  console.log(`-- decodeOpenAIAsync: worker vs decodeOpenAI on the loop (SIMD128 module; medians of ${ROUNDS} rounds; held = the call's own time before it returns its promise; busy = the loop's active time per call; gap = longest time between 1 ms timer ticks in the least disturbed round, ${idle[1].toFixed(2)} ms idle; ${availableParallelism()} CPU(s) for this process${availableParallelism() < 2 ? ': the worker shares one with the loop' : ''})`);
  const data = rows(100, 1536);
  for (const [title, b] of [['100x1536 float body (string)', body(data, Array.from)], ['100x1536 base64 body (string)', body(data, b64)], ['100x1536 float body (Buffer)', Buffer.from(body(data, Array.from))]]) {
    const r = await asyncRace(b, 8);
    const f = (x) => x.toFixed(2).padStart(5);
    console.log(`${title.padEnd(30)} worker ${f(r.worker)} ms/call, held ${f(r.workerHeld)}, busy ${f(r.workerBusy)}, gap ${f(r.workerGap)} | sync ${f(r.sync)} ms/call, held ${f(r.syncHeld)}, busy ${f(r.syncBusy)}, gap ${f(r.syncGap)} | worker/sync time ${(r.worker / r.sync).toFixed(2)}x`);
  }
  w.workerMinBytes = 0;
  const cross = [];
  for (const [n, d] of [[1, 64], [1, 384], [1, 1536], [4, 1536], [16, 1536]]) {
    const b = body(rows(n, d), Array.from);
    const r = await asyncRace(b, 50);
    cross.push(`${n}x${d} ${(b.length / 1024).toFixed(0)} KiB: ${(r.sync * 1000).toFixed(0)} us sync, ${(r.worker * 1000).toFixed(0)} us worker (${(r.worker / r.sync).toFixed(2)}x)`);
  }
  console.log(`crossover (float bodies forced through the worker): ${cross.join('; ')}`);
  await w.close();
  console.log();
}

// ---- kernels: wasm-simd128 vs scalar WebAssembly (the same module forced to scalar, and
// the scalar module) vs native embd, GB/s of the float32 side (64 KiB), as embd bench.
console.log('-- kernels, GB/s (64 KiB of float32 / of bytes); ratios simd128/scalar-wasm and native-best/simd128');
const N = 16384; // floats
const buf = new Uint8Array(N * 4); for (let i = 0; i < buf.length; i++) buf[i] = rnd() & 255;
const b64s = Buffer.from(buf).toString('base64');
const f32 = new Float32Array(N); for (let i = 0; i < N; i++) f32[i] = ((rnd() / 2 ** 32) - 0.5) * 100;
// Through the exports on module memory (inputs copied in once): the kernels alone.
function kernelsOf(m) {
  const x = m.x;
  const inp = m.alloc(buf.length * 2 + 64), out = m.alloc(buf.length * 4 + 64), wp = m.alloc(16);
  const u = () => new Uint8Array(x.memory.buffer);
  u().set(buf, inp);
  const b64in = m.alloc(b64s.length + 16); u().set(Buffer.from(b64s), b64in);
  new Float32Array(x.memory.buffer, out + buf.length * 2, N).set(f32);
  const fin = out + buf.length * 2;
  return {
    crc32: [buf.length, () => x.embd_crc32(0, inp, buf.length)],
    bswap32: [buf.length, () => x.embd_bswap32(out, inp, N)],
    'base64-decode': [buf.length, () => x.embd_base64_decode(b64in, b64s.length, 0, out, buf.length, wp, 0)],
    'base64-encode': [buf.length, () => x.embd_base64_encode(inp, buf.length, 0, out, buf.length * 2, wp)],
    'f16->f32': [N * 4, () => x.embd_to_f32(out, inp, N, 1, 0)],
    'bf16->f32': [N * 4, () => x.embd_to_f32(out, inp, N, 2, 0)],
    'fp8-e4m3->f32': [N * 4, () => x.embd_to_f32(out, inp, N, 3, 0)],
    'int8->f32': [N * 4, () => x.embd_to_f32(out, inp, N, 5, 0)],
    'ubinary->f32': [N * 4, () => x.embd_to_f32(out, inp, N / 8, 8, 0)],
    'f32->f16': [N * 4, () => x.embd_from_f32(inp, fin, N, 1, 0, 0)],
    'f32->bf16': [N * 4, () => x.embd_from_f32(inp, fin, N, 2, 0, 0)],
  };
}
let native = {};
if (nativeEmbd && existsSync(nativeEmbd)) {
  try {
    const j = JSON.parse(execFileSync(nativeEmbd, ['bench', '--json'], { encoding: 'utf8', maxBuffer: 1 << 24 }));
    for (const k of j.kernels) if (!k.emulated) native[k.kernel] = Math.max(native[k.kernel] ?? 0, k.gb_per_s);
    for (const k of j.kernels) if (k.implementation === 'scalar') native[`${k.kernel}:scalar`] = k.gb_per_s;
    console.log(`native: ${nativeEmbd} bench --json, ${j.cpu?.model} (best non-emulated implementation per kernel)`);
  } catch (e) { console.log(`native: ${nativeEmbd} bench failed: ${e.message}`); }
} else console.log('native: not measured (pass --native PATH_TO_embd)');
const ks = kernelsOf(simd), kc = kernelsOf(scalar);
for (const name of Object.keys(ks)) {
  const [bytes, fs] = ks[name], [, fc] = kc[name];
  const r = race({
    simd: () => { simd.setIsa('auto'); fs(); },
    simdForcedScalar: () => { simd.setIsa('scalar'); fs(); },
    scalarModule: fc,
  });
  simd.setIsa('auto');
  const gb = (ns) => bytes / ns;
  const nat = native[name];
  console.log(`${name.padEnd(14)} simd128 ${gb(r.simd).toFixed(2).padStart(6)}  scalar(same module) ${gb(r.simdForcedScalar).toFixed(2).padStart(6)}  scalar module ${gb(r.scalarModule).toFixed(2).padStart(6)}  simd/scalar ${(r.scalarModule / r.simd).toFixed(2)}x` +
    (nat ? `  native best ${nat.toFixed(2).padStart(6)} (native/simd128 ${(nat / gb(r.simd)).toFixed(2)}x)` : ''));
}
if (sink === 42) console.log(''); // keep results alive
void EmbeddingCodecError;
