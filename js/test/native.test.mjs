// Agreement with the native C library on the same inputs: the interop golden files that
// tests/interop writes (the seed encoder's vectors and frames, then embd_interop, the
// native library, encoding the same vectors and the version-2 dtype frames). Both
// WebAssembly modules must decode every native frame to the expected bits and encode
// byte-identical frames. EMBD_NATIVE_BUILD names a native build directory (CMake,
// -DEMBD_BUILD_TESTS=ON); without one the test skips loudly.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { simd, scalar, sameBits } from './helpers.mjs';

const root = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const build = process.env.EMBD_NATIVE_BUILD;
const prog = build && join(build, 'tests/interop/embd_interop');
const skip = !(prog && existsSync(prog)) && `SKIP: no native embd_interop (set EMBD_NATIVE_BUILD to a build dir with tests; got ${build ?? 'nothing'})`;
if (skip) console.log(`# ${skip}`);

test('native frames decode the same in both modules; encoding is byte-identical', { skip }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'embd-golden-'));
  try {
    execFileSync(process.execPath, [join(root, 'tests/interop/seed_codec.mjs'), 'gen', dir], { stdio: 'pipe' });
    execFileSync(prog, [dir], { stdio: 'pipe' });
    const read = (n) => { const b = readFileSync(join(dir, n)); return new Uint8Array(b.buffer, b.byteOffset, b.length).slice(); };
    const lines = readFileSync(join(dir, 'manifest.txt'), 'utf8').split('\n').filter(Boolean);
    assert.ok(lines.length >= 9);
    for (const line of lines) {
      const [name] = line.split(' ');
      const frame = read(`${name}.embd.frame`);
      const want = new Float32Array(read(`${name}.f32`).buffer);
      for (const m of [simd, scalar]) {
        assert.equal(sameBits(m.decodeEmbedding(frame).vector, want), null, name);
        assert.deepEqual(new Uint8Array(m.encodeEmbedding(want)), frame, `${name}: encoded as the native library does`);
        // the C decoder path too (a payload CRC frame re-made by the native bytes + trailer)
        const c = new Uint8Array(m.encodeEmbedding(want, 2));
        assert.equal(sameBits(m.decodeEmbedding(c).vector, want), null, `${name} with CRC`);
      }
    }
    const v16 = Float32Array.from({ length: 16 }, (_, i) => (i * 5) % 11); // embd_interop's dtype input
    const v2 = readFileSync(join(dir, 'v2manifest.txt'), 'utf8').split('\n').filter(Boolean);
    assert.equal(v2.length, 32);
    let compared = 0;
    for (const line of v2) {
      const [name, dtypeName] = line.split(' ');
      const flags = Number(name.slice(name.lastIndexOf('_') + 1));
      const dtype = { 'fp8-e4m3': 'fp8_e4m3', 'fp8-e5m2': 'fp8_e5m2' }[dtypeName] ?? dtypeName;
      const frame = read(`${name}.embd.frame`);
      const batch = read(`${name}.embd.batch`);
      for (const m of [simd, scalar]) {
        if (flags & 1) {
          // zlib payloads: inflated by node:zlib, the values as the uncompressed frame's
          const r = m.decodeEmbedding(frame);
          const plain = m.decodeEmbedding(m.encodeEmbedding(v16, flags & 2, { dtype })).vector;
          assert.equal(sameBits(r.vector, plain), null, name);
          const frames = [...m.decodeBatch(batch)];
          assert.equal(sameBits(frames[1].vector, plain), null, `${name} in a batch`);
          // the module alone (no zlib inside): refused with the reason, never misread
          const p = m.copyIn(frame), o = m.alloc(16 * 4);
          const rc = m.x.embd_js_frame_decode(p, frame.length, 1, o, 16);
          m.free(o);
          assert.equal(rc, 16);
          assert.match(m.error(rc).message, /zlib is not in embd's WebAssembly build/);
          compared++;
          continue;
        }
        assert.deepEqual(new Uint8Array(m.encodeEmbedding(v16, flags, { dtype })), frame, `${name}: byte-identical`);
        const r = m.decodeEmbedding(frame);
        assert.equal(r.version, 2); assert.equal(r.dtype, dtype);
        const back = m.decodeEmbedding(m.encodeEmbedding(v16, flags, { dtype })).vector;
        assert.equal(sameBits(r.vector, back), null, name);
        const frames = [...m.decodeBatch(batch)];
        assert.equal(frames.length, 2); assert.equal(frames[0].version, 1);
        assert.equal(sameBits(frames[1].vector, r.vector), null, `${name} in a batch`);
        compared++;
      }
    }
    assert.equal(compared, 2 * 32);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
