// Tokenizer maps, detokenization and HELLO/READY JSON in the WebAssembly modules. The
// oracles are independent of embd: maps written here from a JS-built vocabulary, the
// expected text from TextEncoder/TextDecoder (WHATWG: one U+FFFD per maximal subpart, the
// rule the C detokenizer documents), the hash from node:crypto, the handshake objects
// from JSON.parse/JSON.stringify.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { FRAME, EmbeddingCodecError } from '../src/embd.js';
import { simd, scalar, rng } from './helpers.mjs';

const ENC = new TextEncoder();
const decode = (bytes) => new TextDecoder().decode(bytes); // non-fatal: U+FFFD per maximal subpart
const sha = (s) => 'sha256:' + createHash('sha256').update(s).digest('hex');
const concat = (parts) => {
  const out = new Uint8Array(parts.reduce((a, p) => a + p.length, 0));
  let at = 0;
  for (const p of parts) { out.set(p, at); at += p.length; }
  return out;
};

// Token strings: ASCII words, Latin-1, CJK, emoji (astral: surrogate pairs in JSON escapes).
function vocabStrings(n, seed) {
  const r = rng(seed);
  const pieces = [' the', 'ing', 'é', 'ö', '日本', '語', '😀', '🦊', 'a', 'Z', '\n', '\t', '"', '\\', '\u0001', 'ß', 'Ω'];
  const set = new Set();
  while (set.size < n) {
    let s = '';
    for (let k = 1 + (r() % 3); k > 0; k--) s += pieces[r() % pieces.length];
    set.add(s + (set.size % 7 === 0 ? String(set.size) : ''));
  }
  return [...set];
}

// schema v0.1: ids 0..2 specials' room, 3..258 byte fallback, 259.. the strings.
function mapV01(strings) {
  const tokens = {};
  strings.forEach((s, i) => { tokens[String(259 + i)] = s; });
  tokens['0'] = '<unk>';
  return JSON.stringify({ id: 'js-test', version: '1', vocab_size: 259 + strings.length + 2,
    byte_fallback_start: 3, byte_fallback_end: 258, tokens,
    special_tokens: { '<s>': 1, '<eot>': 259 + strings.length + 1 } }, null, 1);
}
// What an id stands for, from the JS vocabulary (the oracle).
function bytesV01(strings, id, { skipSpecial = false } = {}) {
  if (id >= 3 && id <= 258) return Uint8Array.of(id - 3);
  if (id === 0) return ENC.encode('<unk>');
  if (id === 1) return skipSpecial ? new Uint8Array(0) : ENC.encode('<s>');
  if (id === 259 + strings.length + 1) return skipSpecial ? new Uint8Array(0) : ENC.encode('<eot>');
  return ENC.encode(strings[id - 259]);
}

// GPT-2's byte -> code point alphabet (the byte_level encoder), from its definition.
const GPT2 = (() => {
  const m = new Array(256);
  let n = 0;
  for (let b = 0; b < 256; b++) {
    const self = (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
    m[b] = String.fromCodePoint(self ? b : 256 + n++);
  }
  return m;
})();

for (const [name, e] of [['simd128', simd], ['scalar', scalar]]) {
  test(`${name}: a v0.1 map: hash (node:crypto), fields, lookups, detokenization (TextDecoder)`, () => {
    const strings = vocabStrings(300, 7);
    const json = mapV01(strings);
    const m = e.loadTokenizerMap(json);
    try {
      assert.equal(m.hash, sha(json));
      assert.equal(e.sha256(json), sha(json));
      assert.equal(e.sha256(ENC.encode(json)), sha(json));
      assert.equal(m.id, 'js-test'); assert.equal(m.version, '1'); assert.equal(m.schema, '0.1');
      assert.equal(m.vocabSize, 259 + 300 + 2); assert.equal(m.tokenCount, 301); assert.equal(m.specialCount, 2);
      for (let i = 0; i < strings.length; i++) {
        const l = m.lookup(259 + i);
        assert.deepEqual(l, { bytes: ENC.encode(strings[i]), kind: 'text' });
      }
      assert.deepEqual(m.lookup(3 + 0xc3), { bytes: Uint8Array.of(0xc3), kind: 'byte' });
      assert.equal(m.lookup(2), null); // in the vocabulary, not in the map
      const r = rng(11);
      const top = 259 + strings.length + 2;
      for (let round = 0; round < 200; round++) {
        const ids = Array.from({ length: r() % 40 }, () => (r() % 4 === 0 ? 3 + (r() % 256) : r() % top)).filter((i) => i !== 2 && i !== 259 + strings.length); // the two ids the map leaves out
        for (const skipSpecial of [false, true]) {
          const want = decode(concat(ids.map((id) => bytesV01(strings, id, { skipSpecial }))));
          assert.equal(m.detokenize(ids, { skipSpecial }), want, `ids ${ids}`);
          // streaming, one id per feed: the same text
          const d = m.detokenizer({ skipSpecial });
          try {
            let got = '';
            for (const id of ids) got += d.feed([id]);
            got += d.finish();
            assert.equal(got, want);
          } finally { d.free(); }
        }
      }
      // an unknown id: UNKNOWN_TOKEN at its index; replaceUnknown: U+FFFD
      assert.throws(() => m.detokenize([259, 2, 260]), (x) => x instanceof EmbeddingCodecError && x.code === 'UNKNOWN_TOKEN' && x.offset === 1);
      assert.equal(m.detokenize([259, 2, 260], { replaceUnknown: true }), strings[0] + '\ufffd' + strings[1]);
      // the expected hash pins the map
      m.free();
      const again = e.loadTokenizerMap(ENC.encode(json), { expectedHash: sha(json) });
      assert.equal(again.hash, sha(json));
      again.free();
      assert.throws(() => e.loadTokenizerMap(json, { expectedHash: sha(json + ' ') }), (x) => x.code === 'MAP_HASH');
    } finally { m.free(); }
    assert.throws(() => m.lookup(259), (x) => x.code === 'INVALID_ARGUMENT'); // freed
  });

  test(`${name}: a v2 byte_level map: raw-byte tokens assembled into UTF-8 (TextDecoder)`, () => {
    const r = rng(5);
    // tokens: every single byte, then random byte strings (parts of UTF-8 sequences too)
    const toks = Array.from({ length: 256 }, (_, b) => Uint8Array.of(b));
    const seen = new Set(toks.map((t) => t.join(',')));
    // and every piece of these texts' UTF-8 (parts of sequences too)
    for (const text of ['é', '日本語', '😀🦊', ' hello', 'ß!', 'Ωmega']) {
      const src = ENC.encode(text);
      for (let a = 0; a < src.length; a++)
        for (let b = a + 2; b <= src.length; b++) {
          const t = src.subarray(a, b);
          if (!seen.has(t.join(','))) { seen.add(t.join(',')); toks.push(t); }
        }
    }
    const vocab = {};
    toks.forEach((t, id) => { vocab[[...t].map((b) => GPT2[b]).join('')] = id; });
    const json = JSON.stringify({ id: 'js-v2', version: '2', vocab_size: toks.length + 1, encoder: 'byte_level',
      vocab, special_tokens: { '<|eot|>': toks.length } });
    const m = e.loadTokenizerMap(json);
    try {
      assert.equal(m.schema, '2'); assert.equal(m.hash, sha(json)); assert.equal(m.tokenCount, toks.length);
      assert.deepEqual(m.lookup(300), { bytes: toks[300], kind: 'bytes' });
      assert.deepEqual(m.lookup(toks.length), { bytes: ENC.encode('<|eot|>'), kind: 'special' });
      for (let round = 0; round < 200; round++) {
        const ids = Array.from({ length: r() % 30 }, () => r() % (toks.length + 1));
        const want = decode(concat(ids.map((id) => (id === toks.length ? ENC.encode('<|eot|>') : toks[id]))));
        assert.equal(m.detokenize(ids), want);
        const d = m.detokenizer();
        try {
          let got = '';
          for (let i = 0; i < ids.length; i += 3) got += d.feed(ids.slice(i, i + 3));
          assert.equal(got + d.finish(), want);
        } finally { d.free(); }
      }
    } finally { m.free(); }
  });

  test(`${name}: a malformed or wrong-schema map: MAP_SCHEMA at the fault's byte`, () => {
    const good = '{"id":"x","version":"v1","vocab_size":5,"tokens":{"1":"a"}}';
    assert.equal(e.loadTokenizerMap(good).tokenCount, 1);
    const cases = [
      [good.replace('"a"}', '"a",}'), good.indexOf('"a"}') + 4], // trailing comma: at the '}'
      [good.replace('5', '-5'), good.indexOf('"vocab_size"')],
      [good.replace('"1"', '"9"'), good.indexOf('"1"')], // id 9 >= vocab_size: at its key
      [good.slice(0, 20), 20], // ends early
    ];
    for (const [text, at] of cases) {
      assert.throws(() => e.loadTokenizerMap(text), (x) => x instanceof EmbeddingCodecError && x.code === 'MAP_SCHEMA' && x.offset === at,
        `${text}: want offset ${at}`);
    }
  });

  test(`${name}: HELLO/READY frames as JSON objects (JSON.stringify / JSON.parse)`, () => {
    const hello = { codec_version: '0.5', modalities: ['text-tokens'], accept_tokenizers: ['a/b', 'c'], future: { x: [1, 2] } };
    const f = e.encodeFrame(FRAME.HELLO, hello);
    const payload = ENC.encode(JSON.stringify(hello));
    assert.equal(f[0], FRAME.HELLO);
    assert.equal(new DataView(f.buffer, f.byteOffset).getUint32(1), payload.length);
    assert.deepEqual(f.subarray(5), payload);
    const json = mapV01(vocabStrings(10, 3));
    const ready = { codec_version: '0.5', tokenizer_id: 'js-test', map_url: 'https://example.invalid/map.json', map_hash: sha(json) };
    const frames = e.decodeFrames(concat([f, e.encodeFrame(FRAME.READY, ready)]));
    assert.deepEqual(frames.map((x) => x.typeName), ['HELLO', 'READY']);
    assert.deepEqual(frames[0].message, hello);
    assert.deepEqual(frames[1].message, ready);
    assert.deepEqual(e.parseHandshake(FRAME.READY, JSON.stringify(ready)), ready);
    // the C parser's checks: a non-string modality; a READY without its map pin; bad JSON
    assert.throws(() => e.encodeFrame(FRAME.HELLO, { codec_version: '0.5', modalities: [1] }), (x) => x.code === 'CODEC_HANDSHAKE');
    assert.throws(() => e.encodeFrame(FRAME.READY, { codec_version: '0.5', tokenizer_id: 't' }), (x) => x.code === 'CODEC_HANDSHAKE');
    const bad = '{"codec_version":"0.5","future":[1,,2]}';
    assert.throws(() => e.decodeFrames(e.encodeFrame(FRAME.HELLO, bad))[0].message,
      (x) => x.code === 'CODEC_HANDSHAKE' && x.offset === bad.indexOf(',,') + 1);
  });
}
