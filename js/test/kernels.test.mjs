// The kernels: the wasm-simd128 rows against the scalar rows bit for bit (inside the
// SIMD128 module with setIsa('scalar'), and the scalar-only module), and each against an
// oracle outside embd: Buffer base64, the seed's CRC-32, DataView reads of every dtype.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { crc32 as seedCrc } from '../../tests/interop/seed_codec.mjs';
import { simd, scalar, sameBits, oracleToF32, randomBytes, f32FromBits, rng } from './helpers.mjs';
import { simdSupported, KERNEL, DTYPES } from '../src/embd.js';

const sizes = [0, 1, 2, 3, 4, 5, 15, 16, 17, 31, 32, 33, 47, 48, 49, 63, 64, 65, 127, 191, 192, 255, 1000, 3071, 3072, 3073, 6144, 9999, 65536 + 7];

// Each check runs three ways: SIMD128 module (wasm-simd128 rows), the same module forced to
// scalar, and the scalar module.
function threeWays(fn) {
  simd.setIsa('auto');
  const a = fn(simd);
  simd.setIsa('scalar');
  const b = fn(simd);
  simd.setIsa('auto');
  const c = fn(scalar);
  return [a, b, c];
}

test('the SIMD128 module runs the wasm-simd128 rows; the scalar module has none', () => {
  assert.equal(simdSupported(), true, 'Node has SIMD128');
  for (const k of Object.values(KERNEL)) {
    assert.equal(simd.activeImpl(k), 'wasm-simd128', `kernel ${k}`);
    assert.equal(scalar.activeImpl(k), 'scalar', `kernel ${k}`);
  }
  simd.setIsa('scalar');
  assert.equal(simd.activeImpl(KERNEL.BASE64_DECODE), 'scalar');
  simd.setIsa('auto');
  assert.throws(() => scalar.setIsa('wasm-simd128'), (e) => e.code === 'UNSUPPORTED_ISA');
});

test('crc32: every way equals the seed CRC-32 (lengths around the split, random offsets)', () => {
  for (const n of sizes) {
    const b = randomBytes(n + 3, n + 1);
    for (const off of [0, 1, 3]) {
      const s = b.subarray(off, off + n);
      const want = seedCrc(s);
      for (const got of threeWays((m) => m.crc32(s))) assert.equal(got, want, `n=${n} off=${off}`);
    }
  }
  // running CRC: crc32(b, crc32(a)) == crc32(a + b)
  const a = randomBytes(5000, 1), b = randomBytes(7000, 2);
  const ab = new Uint8Array(12000); ab.set(a); ab.set(b, 5000);
  assert.equal(simd.crc32(b, simd.crc32(a)), seedCrc(ab));
});

test('base64 decode/encode: every way equals Buffer (standard and URL, padded or not)', () => {
  for (const n of sizes) {
    const b = randomBytes(n, 77 + n);
    for (const [url, pad] of [[false, true], [true, true], [true, false], [false, false]]) {
      let want = Buffer.from(b).toString(url ? 'base64url' : 'base64');
      if (url && pad) want += '='.repeat((4 - (want.length % 4)) % 4);
      if (!url && !pad) want = want.replace(/=+$/, '');
      for (const got of threeWays((m) => m.base64Encode(b, { url, pad }))) assert.equal(got, want, `n=${n}`);
      for (const got of threeWays((m) => m.base64Decode(want, { url, pad }))) assert.deepEqual(Buffer.from(got), Buffer.from(b), `n=${n}`);
    }
  }
});

test('base64 errors: the same code and offset every way', () => {
  const good = Buffer.from(randomBytes(300, 5)).toString('base64');
  const cases = [good.slice(0, 399), good.slice(0, 150) + '*' + good.slice(151), good.slice(0, 398) + '==',
    good.slice(0, 200) + ' ' + good.slice(201), 'QQ==QQ==', 'QR==', good.slice(0, 399) + '\u00e9'];
  for (const s of cases) {
    const errs = threeWays((m) => { try { m.base64Decode(s); return null; } catch (e) { return [e.code, e.offset]; } });
    assert.ok(errs[0], `${s.slice(-8)} refused`);
    assert.deepEqual(errs[1], errs[0]);
    assert.deepEqual(errs[2], errs[0]);
  }
});

test('dtype -> float32: every dtype and byte order equals the DataView oracle, every way', () => {
  for (const n of [0, 1, 7, 8, 9, 15, 16, 17, 64, 100, 1536, 4099]) {
    for (const dt of DTYPES) {
      for (const bo of ['little', 'big']) {
        const per = { f32: 4, f16: 2, bf16: 2 }[dt] ?? 1;
        const bytes = randomBytes(n * per, n * 31 + per);
        const want = oracleToF32(bytes, dt, bo);
        for (const got of threeWays((m) => m.toF32(bytes, dt, bo))) assert.equal(sameBits(got, want), null, `${dt} ${bo} n=${n}`);
      }
    }
  }
});

test('float32 -> f16/bf16: every way agrees, and reads back through the oracle to the nearest value', () => {
  const r = rng(3);
  for (const n of [0, 1, 7, 8, 9, 100, 1536, 4099]) {
    const bits = Array.from({ length: n }, () => r());
    bits.push(0x7f800000, 0xff800000, 0x7fc00001, 0x477fe000, 0x477ff000, 0x33800000, 0x33000001);
    const v = f32FromBits(bits);
    for (const dt of ['f16', 'bf16']) {
      for (const bo of ['little', 'big']) {
        const [a, b, c] = threeWays((m) => m.fromF32(v, dt, bo));
        assert.deepEqual(Buffer.from(b), Buffer.from(a), `${dt} ${bo}`);
        assert.deepEqual(Buffer.from(c), Buffer.from(a), `${dt} ${bo}`);
        // Each result is the representable value nearest the input (ties: even), via the oracle.
        const back = oracleToF32(a, dt, bo);
        for (let i = 0; i < v.length; i++) {
          if (Number.isNaN(v[i])) { assert.ok(Number.isNaN(back[i])); continue; }
          const x = v[i], y = back[i];
          if (!Number.isFinite(y)) continue; // overflow: checked by the f16 max case above
          // no representable value strictly closer: neighbours by one unit in the last place
          const dv = new DataView(new ArrayBuffer(2));
          const code = dt === 'f16' ? new DataView(a.buffer).getUint16(i * 2, bo === 'little') : new DataView(a.buffer).getUint16(i * 2, bo === 'little');
          for (const d of [-1, 1]) {
            dv.setUint16(0, (code + d) & 0xffff, true);
            const nb = oracleToF32(new Uint8Array(dv.buffer), dt, 'little')[0];
            if (Number.isFinite(nb) && Math.sign(nb) === Math.sign(y)) assert.ok(Math.abs(nb - x) >= Math.abs(y - x), `${dt} ${x}: ${y} but ${nb} is closer`);
          }
        }
      }
    }
  }
});

test('property: base64 round trips and agreement on random inputs', () => {
  fc.assert(fc.property(fc.uint8Array({ maxLength: 2000 }), (b) => {
    const [e1, e2, e3] = threeWays((m) => m.base64Encode(b));
    assert.equal(e1, Buffer.from(b).toString('base64'));
    assert.equal(e2, e1); assert.equal(e3, e1);
    assert.deepEqual(Buffer.from(simd.base64Decode(e1)), Buffer.from(b));
  }), { numRuns: 300 });
});

test('load({module}): a precompiled WebAssembly.Module or its bytes, either build', async () => {
  const { readFile } = await import('node:fs/promises');
  const { load } = await import('../src/embd.js');
  for (const name of ['simd128', 'scalar']) {
    const bytes = await readFile(new URL(`../dist/embd-${name}.wasm`, import.meta.url));
    for (const module of [bytes, await WebAssembly.compile(bytes)]) {
      const m = await load({ module });
      assert.equal(m.simd, name === 'simd128');
      assert.equal(m.activeImpl(KERNEL.BASE64_DECODE), name === 'simd128' ? 'wasm-simd128' : 'scalar');
      assert.equal(m.crc32(new TextEncoder().encode('123456789')), 0xcbf43926);
    }
  }
});

// Every byte value at positions of a block of `chars` characters (every `step`-th), in
// the given alphabets: the same result (bytes, or error code and offset) every way, and
// Buffer's bytes for characters of the alphabet.
function everyByteEverywhere(chars, step, alphabets = [false, true]) {
  const base = Buffer.from(randomBytes(chars / 4 * 3, 99)).toString('base64'); // no padding
  for (const url of alphabets) {
    const b = url ? base.replace(/\+/g, '-').replace(/\//g, '_') : base;
    for (let pos = 0; pos < chars; pos += step) {
      for (let c = 0; c < 256; c++) {
        const u = Buffer.from(b, 'latin1');
        u[pos] = c;
        const [a, s, m] = threeWays((e) => { try { return Buffer.from(e.base64Decode(u, { url })).toString('hex'); } catch (err) { return `${err.code}@${err.offset}`; } });
        assert.equal(s, a, `url=${url} pos=${pos} c=${c}`);
        assert.equal(m, a, `url=${url} pos=${pos} c=${c}`);
        // and against Buffer for the characters of the alphabet (Buffer skips the others)
        const alpha = url ? /[A-Za-z0-9_-]/ : /[A-Za-z0-9+/]/;
        if (alpha.test(String.fromCharCode(c)) && pos < chars - 1) assert.equal(a, Buffer.from(u.toString('latin1'), url ? 'base64url' : 'base64').toString('hex'));
        else if (!alpha.test(String.fromCharCode(c))) assert.match(a, /^BASE64_/, `c=${c} refused`);
      }
    }
  }
}
test('base64 decode: every byte value at every position of a 64-character block, std and URL: the same result every way', () => {
  everyByteEverywhere(64, 5);
});
// The SIMD128 decoder of the standard alphabet steps 64 characters at a time while 72
// remain, then 16 at a time: 200 characters take both (every 5th position: each lane of
// each of a step's four vectors). ~1 s.
test('base64 decode: every byte value at positions of a 200-character block (the 64-character steps): the same result every way', () => {
  everyByteEverywhere(200, 5, [false]);
});
