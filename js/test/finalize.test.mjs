// Module memory released by the garbage collector: tokenizer maps, detokenizers, stream-mode
// readers and batch generators dropped without free()/destroy() are released by
// js/src/embd.js's FinalizationRegistry. The observable is js/wasm/glue.c's live count per
// kind (embd_js_live: made minus released, counted in the glue's makers and releasers) and
// the module's memory size (it never shrinks, so a leak shows as growth). The text a
// detokenizer gives is checked against the vocabulary written here. gc() comes from V8's
// --expose-gc flag, set at run time (node --test gives no way to pass it per file).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import v8 from 'node:v8';
import vm from 'node:vm';
import { load, Embd, EmbeddingCodecError } from '../src/embd.js';

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc');
const KIND = { map: 0, detok: 1, reader: 2, batch: 3 };

const e = await load({ simd: true });
const live = (k) => e.x.embd_js_live(KIND[k]);
// Collects until the live count of kind k is want (finalizers run in a later task), or gives
// up after `tries` collections (one or two suffice here; a count that must stay takes them all).
async function settle(k, want, x = e, tries = 50) {
  for (let i = 0; i < tries && x.x.embd_js_live(KIND[k]) !== want; i++) {
    gc();
    await new Promise((r) => setTimeout(r, 1));
  }
  return x.x.embd_js_live(KIND[k]);
}

// A v0.1 map of n words (ids 3..): enough that a few hundred maps take megabytes.
const WORDS = Array.from({ length: 400 }, (_, i) => `word${i}-${'x'.repeat(i % 23)}`);
const MAP = JSON.stringify({ id: 'gc-test', version: '1', vocab_size: 3 + WORDS.length,
  tokens: Object.fromEntries(WORDS.map((w, i) => [String(3 + i), w])) });

// In functions of their own, so that nothing on this stack frame keeps them reachable.
function dropMaps(x, n) {
  for (let i = 0; i < n; i++) {
    const m = x.loadTokenizerMap(MAP);
    const d = m.detokenizer();
    assert.equal(d.feed([3 + i % WORDS.length, 5]), WORDS[i % WORDS.length] + WORDS[2]);
  }
}
function dropReaders(n) {
  for (let i = 0; i < n; i++) {
    // a frame cut short: the reader holds its bytes (and the queue) in the module
    e.protobufReader().feed(e.encodeProtobuf({ ids: [1, 2, 3] }).subarray(0, 5));
    e.msgpackReader().feed(e.encodeMsgpack({ ids: [1, 2, 3] }).subarray(0, 5));
  }
}
function dropBatches(n) {
  const batch = e.encodeBatch([[1, 2], [3, 4, 5]], 0, { dtype: 'f16' });
  for (let i = 0; i < n; i++) {
    const g = e.decodeBatch(batch);
    assert.deepEqual([...g.next().value.vector], [1, 2]); // started: the envelope is in the module
  }
}

test('dropped maps and detokenizers are released; the module memory stops growing', async () => {
  assert.equal(live('map'), 0);
  const sizes = [];
  for (let round = 0; round < 4; round++) {
    dropMaps(e, 150);
    assert.equal(await settle('detok', 0), 0, `round ${round}: detokenizers left`);
    assert.equal(await settle('map', 0), 0, `round ${round}: maps left`);
    sizes.push(e.x.memory.buffer.byteLength);
  }
  // Without the registry each round adds 150 maps (megabytes); with it, round 1's heap is reused.
  assert.deepEqual(sizes, sizes.map(() => sizes[0]), `memory by round: ${sizes}`);
});

test('dropped readers and started batch generators are released', async () => {
  dropReaders(200);
  assert.equal(await settle('reader', 0), 0);
  dropBatches(200);
  assert.equal(await settle('batch', 0), 0);
  // a generator that ends releases at once, collected or not
  const all = [...e.decodeBatch(e.encodeBatch([[1], [2]]))];
  assert.equal(all.length, 2);
  assert.equal(live('batch'), 0);
});

test('a batch generator lets go before its last frame; steps interleave; a fault after it comes next', () => {
  // f16 values exact in f16 (the module's conversion path), f32 ones (the view path)
  const rows = [[1, 2], [0.5, -3, 4], [8]];
  const env = new Uint8Array(e.encodeBatch(rows, 0, { dtype: 'f16' }));
  const tr = new Uint8Array(env.length + 3);
  tr.set(env);
  const g1 = e.decodeBatch(tr), g2 = e.decodeBatch(e.encodeBatch(rows));
  for (let i = 0; i < rows.length; i++) {
    assert.deepEqual([...g1.next().value.vector], rows[i]);
    assert.deepEqual([...e.decodeEmbedding(e.encodeEmbedding(Float32Array.of(9, 9, 9, 9), 0, { dtype: 'bf16' })).vector], [9, 9, 9, 9]);
    assert.deepEqual([...g2.next().value.vector], rows[i]);
    // held while frames are to come, let go with the last one
    assert.equal(live('batch'), i < rows.length - 1 ? 2 : 0, `frame ${i}`);
  }
  assert.throws(() => g1.next(), (x) => x.code === 'BATCH_TRAILING' && x.offset === env.length);
  assert.deepEqual(g2.next(), { value: undefined, done: true });
  const one = e.decodeBatch(e.encodeBatch([[5]]));
  assert.deepEqual([...one.next().value.vector], [5]);
  assert.equal(live('batch'), 0);
  const ended = e.decodeBatch(env);
  ended.next();
  ended.return();
  assert.equal(live('batch'), 0);
});

test('a live detokenizer keeps its map; free() releases at once, once, children first', async () => {
  let d = (() => e.loadTokenizerMap(MAP).detokenizer())(); // the map itself is dropped
  assert.equal(await settle('map', 0, e, 5), 1, 'the map went while its detokenizer lives');
  assert.equal(d.feed([3, 4]), WORDS[0] + WORDS[1]);
  d = null;
  assert.equal(await settle('detok', 0), 0);
  assert.equal(await settle('map', 0), 0);

  const m = e.loadTokenizerMap(MAP);
  const d1 = m.detokenizer(), d2 = m.detokenizer();
  d1.free();
  d1.free();
  assert.equal(live('detok'), 1);
  m.free(); // releases d2 first: the C API wants the map to outlive its detokenizers
  assert.equal(live('detok'), 0);
  assert.equal(live('map'), 0);
  assert.throws(() => d2.feed([3]), (x) => x instanceof EmbeddingCodecError && x.code === 'INVALID_ARGUMENT' && /map already freed/.test(x.message));
  d2.free(); // no second release: the counts would wrap below zero
  m.free();
  const r = e.msgpackReader();
  r.destroy();
  r.destroy();
  assert.throws(() => r.feed(new Uint8Array(1)), (x) => x.code === 'INVALID_ARGUMENT');
  assert.deepEqual([0, 1, 2, 3].map((k) => e.x.embd_js_live(k)), [0, 0, 0, 0]);
});

// An instance over e's exports that logs the releases (and skips _initialize: the module
// is initialised already).
function spied(log) {
  const x = {};
  for (const [k, v] of Object.entries(e.x)) {
    if (k === '_initialize') continue;
    x[k] = k === 'embd_js_tokmap_free' || k === 'embd_js_detok_destroy' ? (p) => { log.push(`${k} ${p}`); return v(p); } : v;
  }
  return new Embd({ exports: x }, true);
}

test('collected together, a map is released after its detokenizers', async () => {
  const log = [];
  const s = spied(log);
  // the pointers only (numbers): nothing here keeps the objects
  const made = (() => Array.from({ length: 20 }, () => {
    const m = s.loadTokenizerMap(MAP);
    return [m.ptr, m.detokenizer().ptr, m.detokenizer().ptr];
  }))();
  assert.equal(await settle('map', 0, s), 0);
  assert.equal(await settle('detok', 0, s), 0);
  assert.equal(log.length, 60);
  for (const [mp, ...dps] of made) {
    const at = log.indexOf(`embd_js_tokmap_free ${mp}`);
    for (const dp of dps) {
      const dat = log.indexOf(`embd_js_detok_destroy ${dp}`);
      assert.ok(dat >= 0 && dat < at, `detokenizer ${dp} released at ${dat}, its map ${mp} at ${at}`);
    }
  }
});

test('without FinalizationRegistry nothing changes: free() releases, a dropped map stays', async () => {
  const saved = globalThis.FinalizationRegistry;
  const s = spied([]);
  try {
    delete globalThis.FinalizationRegistry;
    const m = s.loadTokenizerMap(MAP);
    assert.equal(s.owners, null);
    m.detokenizer();
    m.free();
    assert.equal(live('map'), 0);
    assert.equal(live('detok'), 0);
    dropMaps(s, 1);
  } finally { globalThis.FinalizationRegistry = saved; }
  assert.equal(await settle('map', 0, s, 5), 1);
  // what the engine did not release stays: the caller's leak, as before
  assert.equal(live('detok'), 1);
});
