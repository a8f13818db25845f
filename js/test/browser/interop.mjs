// The interop cases in a browser: the seed codec (served from tests/interop/seed_codec.mjs
// without its Node driver) both ways, batches, OpenAI float and base64 bodies against
// JSON.parse and atob, CRC-32 against the seed's, f16 against a DataView reading, error
// codes, decodeOpenAIAsync through a Web Worker. ?simd=auto|1|0 picks the module; the
// result goes into #out as JSON.
import { load, init, simdSupported, EmbeddingCodecError, decodeStream, MLEmbedClient } from '/js/src/embd.js';
import * as seed from '/seed.mjs';

const params = new URLSearchParams(location.search);
const q = params.get('simd') ?? 'auto';
// ?novalidate=1: an engine without SIMD128 (V8 has no switch to turn it off: its
// WebAssembly.validate is made to refuse the probe module, as such an engine's would).
if (params.get('novalidate') === '1') { const v = WebAssembly.validate; WebAssembly.validate = (b) => (b.length === 31 ? false : v(b)); }
const failures = [];
let pass = 0;
const check = (ok, what) => { if (ok) pass++; else failures.push(what); };
const bits = (f) => Array.from(new Uint32Array(f.buffer, f.byteOffset, f.length));
const same = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);
const u8 = (ab) => new Uint8Array(ab);
let s = 0x454d4244;
const rnd = () => { s ^= s << 13; s >>>= 0; s ^= s >>> 17; s ^= s << 5; s >>>= 0; return s; };

async function run() {
  const e = await load({ simd: q === 'auto' ? 'auto' : q === '1' });
  const cases = [[], [0x80000000], [0x7f800000, 0xff800000, 1], [0x7fc12345, 0xffffffff, 0x7f800001, 0x3eaaaaab],
    Array.from({ length: 1536 }, rnd), Array.from({ length: 4099 }, rnd)];
  const frames = [];
  for (const c of cases) {
    const v = new Float32Array(c.length); new Uint32Array(v.buffer).set(c);
    const ours = u8(e.encodeEmbedding(v)), theirs = u8(seed.encodeEmbedding(v));
    check(same(Array.from(ours), Array.from(theirs)), `encode ${c.length}`);
    check(same(bits(e.decodeEmbedding(theirs.buffer).vector), c), `decode seed frame ${c.length}`);
    check(same(bits(seed.decodeEmbedding(ours.buffer).vector), c), `seed decodes ours ${c.length}`);
    frames.push([v, ours]);
  }
  const batch = e.encodeBatch(frames.map(([v]) => v));
  const back = [...seed.decodeBatch(batch)];
  check(back.length === frames.length && back.every((r, i) => same(bits(r.vector), bits(frames[i][0]))), 'batch in the seed');
  const ours = [...e.decodeBatch(batch)];
  check(ours.length === frames.length && ours.every((r, i) => same(bits(r.vector), bits(frames[i][0]))), 'batch in embd');
  // OpenAI bodies
  const rows = [0, 1, 2].map(() => Float32Array.from({ length: 64 }, () => (rnd() / 2 ** 32) - 0.5));
  const fbody = JSON.stringify({ data: rows.map((r, i) => ({ index: i, embedding: Array.from(r) })), model: 'm' });
  const fr = e.decodeOpenAI(fbody);
  check(fr.count === 3 && rows.every((r, i) => same(bits(fr.row(i)), bits(new Float32Array(JSON.parse(fbody).data[i].embedding)))), 'openai float vs JSON.parse');
  const b64 = (f) => btoa(String.fromCharCode(...u8(f.buffer)));
  const bbody = JSON.stringify({ data: rows.map((r, i) => ({ index: i, embedding: b64(r) })), model: 'm' });
  const br = e.decodeOpenAI(bbody);
  check(rows.every((r, i) => same(bits(br.row(i)), bits(r))), 'openai base64');
  const atobF32 = (str) => { const bin = atob(str); const b = new Uint8Array(bin.length); for (let i = 0; i < bin.length; i++) b[i] = bin.charCodeAt(i); return new Float32Array(b.buffer); };
  check(same(bits(e.decodeBase64Embedding(b64(rows[1]))), bits(atobF32(b64(rows[1])))), 'base64 vs atob');
  // decodeOpenAIAsync through a real Web Worker (js/src/worker.js holding the same compiled
  // module): a body over workerMinBytes, as a string and as bytes (which stay the caller's)
  const wrows = Array.from({ length: 48 }, () => Float32Array.from({ length: 512 }, () => (rnd() / 2 ** 32) - 0.5));
  const wbody = JSON.stringify({ data: wrows.map((r, i) => ({ index: i, embedding: Array.from(r) })), model: 'w' });
  const woracle = JSON.parse(wbody).data.map((d) => new Float32Array(d.embedding));
  const wbytes = new TextEncoder().encode(wbody);
  for (const input of [wbody, wbytes]) {
    const wr = await e.decodeOpenAIAsync(input);
    check(wr.count === 48 && wr.model === 'w' && woracle.every((o, i) => same(bits(wr.row(i)), bits(o))), `decodeOpenAIAsync vs JSON.parse (${typeof input})`);
  }
  check(wbytes.byteLength === wbody.length, 'decodeOpenAIAsync left the caller\'s bytes attached');
  const cut = wbody.slice(0, -3);
  let syncErr, asyncErr;
  try { e.decodeOpenAI(cut); } catch (err) { syncErr = err; }
  try { await e.decodeOpenAIAsync(cut); } catch (err) { asyncErr = err; }
  check(asyncErr instanceof EmbeddingCodecError && syncErr && ['code', 'offset', 'result', 'message'].every((k) => asyncErr[k] === syncErr[k]), `decodeOpenAIAsync error ${asyncErr?.code} ${asyncErr?.offset}`);
  const workerState = e.workerState;
  // CRC-32 and f16
  const data = Uint8Array.from({ length: 10000 }, () => rnd() & 255);
  check(e.crc32(data) === seed.crc32(data), 'crc32 vs seed');
  const h = Uint8Array.from({ length: 64 }, () => rnd() & 255);
  const dv = new DataView(h.buffer);
  const f16 = e.toF32(h, 'f16', 'big');
  let ok = true;
  for (let i = 0; i < 32; i++) {
    const x = dv.getUint16(i * 2, false), ex = (x >> 10) & 31, m = x & 1023, sg = x & 0x8000 ? -1 : 1;
    const want = ex === 31 ? (m ? NaN : sg * Infinity) : ex === 0 ? sg * m * 2 ** -24 : sg * (1 + m / 1024) * 2 ** (ex - 15);
    if (!(Object.is(f16[i], want) || (Number.isNaN(want) && Number.isNaN(f16[i])))) ok = false;
  }
  check(ok, 'f16 vs DataView');
  // zlib payloads: no synchronous zlib in a browser: the synchronous calls refuse them
  // naming the asynchronous ones, which use CompressionStream / DecompressionStream
  try { e.encodeEmbedding(new Float32Array([1]), 1); check(false, 'zlib encode refused'); } catch (err) { check(err.code === 'UNAVAILABLE' && /encodeEmbeddingAsync/.test(err.message), `zlib encode: ${err.code}`); }
  const encoded = await zlibChecks(e);
  // errors
  try { e.decodeEmbedding(new Uint8Array(15)); check(false, 'short frame'); } catch (err) { check(err instanceof EmbeddingCodecError && err.code === 'FRAME_TOO_SMALL' && err.offset === 15, 'short frame code'); }
  try { e.decodeOpenAI('{"data":[1'); check(false, 'bad json'); } catch (err) { check(err.code === 'OPENAI_JSON' || err.code === 'OPENAI_SHAPE', `bad json code ${err.code}`); }
  return { simd: e.simd, validate: simdSupported(), active: e.activeImpl(2), encoded, workerState };
}

// The zlib cases of js/test/zlib_cases.mjs (frames made by node:zlib and the seed's CRC-32,
// served as /zlib-cases.json) through decodeEmbeddingAsync, decodeStream and the client;
// frames encodeEmbeddingAsync makes go back in the result for node:zlib to read.
async function zlibChecks(e) {
  const cases = (await (await fetch('/zlib-cases.json')).json()).map((c) => ({ ...c, frame: Uint8Array.from(atob(c.frame), (ch) => ch.charCodeAt(0)) }));
  for (const c of cases) {
    let got;
    try { const r = await e.decodeEmbeddingAsync(c.frame); got = { bits: bits(r.vector) }; } catch (err) { got = { code: err.code, offset: err.offset }; }
    check(c.bits ? got.bits && same(got.bits, c.bits) : got.code === c.code && got.offset === c.offset, `zlib case ${c.name}: ${JSON.stringify(got).slice(0, 80)}`);
  }
  const good = cases.filter((c) => c.bits);
  try { e.decodeEmbedding(good[0].frame); check(false, 'zlib decode refused'); } catch (err) { check(err.code === 'UNAVAILABLE' && err.offset === 5 && /decodeEmbeddingAsync/.test(err.message), `zlib decode: ${err.code}`); }
  // decodeStream over a ReadableStream of 7-byte chunks of a batch of the good frames
  await init({ simd: e.simd }); // decodeStream and the client use the default instance
  const env = new Uint8Array(4 + good.reduce((a, c) => a + c.frame.length, 0));
  new DataView(env.buffer).setUint32(0, good.length, true);
  let at = 4;
  for (const c of good) { env.set(c.frame, at); at += c.frame.length; }
  let i = 0;
  const rs = new ReadableStream({ pull(ctl) { if (i >= env.length) ctl.close(); else { ctl.enqueue(env.slice(i, i + 7)); i += 7; } } });
  const streamed = [];
  for await (const r of decodeStream(rs)) streamed.push(bits(r.vector));
  check(streamed.length === good.length && streamed.every((b, k) => same(b, good[k].bits)), 'zlib frames through decodeStream');
  const client = new MLEmbedClient('http://x', 'k', { fetch: async () => new Response(good[1].frame, { headers: { 'content-type': 'application/octet-stream' } }) });
  check(same(bits(await client.embedOne('t')), good[1].bits), 'zlib frame through MLEmbedClient.embedOne');
  // encodeEmbeddingAsync: CompressionStream; read back here and by node:zlib in the test
  const v = Float32Array.from({ length: 300 }, (_, k) => Math.sin(k));
  const encoded = [];
  for (const [flags, dtype] of [[1, 'f32'], [3, 'f32'], [3, 'bf16']]) {
    const f = new Uint8Array(await e.encodeEmbeddingAsync(v, flags, { dtype }));
    const back = await e.decodeEmbeddingAsync(f);
    check(back.dimensions === 300 && (dtype !== 'f32' || same(bits(back.vector), bits(v))), `encodeEmbeddingAsync ${flags} ${dtype} read back`);
    encoded.push({ flags, dtype, frame: btoa(String.fromCharCode(...f)), values: bits(v) });
  }
  return encoded;
}

// The result goes into the page (for a person looking at it) and, when the test runner named
// a run, to its server: the runner waits for that POST in real time (Chromium's
// --virtual-time-budget did not wait for DecompressionStream's work and dumped "running").
function report(obj) {
  const text = JSON.stringify(obj);
  document.getElementById('out').textContent = text;
  const id = new URLSearchParams(location.search).get('run');
  if (id) fetch(`/result?run=${encodeURIComponent(id)}`, { method: 'POST', body: text });
}
run().then((info) => report({ ...info, pass, failures }),
  (err) => report({ error: String(err && err.stack || err), pass, failures }));
