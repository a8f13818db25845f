// zlib-payload frames (flags bit 0) made outside embd: node:zlib deflates, the seed's
// CRC-32 fills the header and trailer CRCs, and each case says what decoding must give:
// the values (as float32 bits) or an error code and offset. Used by zlib.test.mjs (Node,
// both inflaters) and served to the headless Chromium page by browser.test.mjs.
import { deflateSync as nodeDeflate } from 'node:zlib';
import { crc32 } from '../../tests/interop/seed_codec.mjs';

// A Uint8Array of its own (a Buffer's slice() is a view: a fault made in a copy would
// change the original too).
const deflateSync = (u, o) => new Uint8Array(nodeDeflate(u, o));
const le32 = (dv, at, v) => dv.setUint32(at, v >>> 0, true);

// A frame around zlib stream z of `dims` values of dtype dt (0: f32, version 1; else
// version 2) with flags (1, or 3 with the payload CRC trailer).
export function zframe(z, dims, { dt = 0, flags = 1 } = {}) {
  const tr = flags & 2 ? 4 : 0;
  const f = new Uint8Array(20 + z.length + tr);
  const dv = new DataView(f.buffer);
  dv.setUint32(0, 0x454d4244, false);
  f[4] = dt === 0 ? 1 : 2;
  f[5] = flags;
  f[6] = dt;
  le32(dv, 8, dims);
  le32(dv, 12, crc32(f.subarray(0, 12)));
  le32(dv, 16, z.length);
  f.set(z, 20);
  if (tr) le32(dv, 20 + z.length, crc32(f.subarray(16, 20 + z.length)));
  return f;
}

const bitsOf = (f) => Array.from(new Uint32Array(f.buffer, f.byteOffset, f.length));
const f32Bytes = (f) => new Uint8Array(f.buffer, f.byteOffset, f.byteLength);

export function zlibCases() {
  let s = 0x7a6c6962;
  const rnd = () => { s ^= s << 13; s >>>= 0; s ^= s >>> 17; s ^= s << 5; s >>>= 0; return s; };
  const cases = [];
  const ok = (name, frame, values) => cases.push({ name, frame, bits: bitsOf(values) });
  const bad = (name, frame, code, offset) => cases.push({ name, frame, code, offset });

  const four = new Float32Array([1, 2, 3, 4]);
  const z4 = deflateSync(f32Bytes(four));
  ok('f32, 4 values', zframe(z4, 4), four);
  const big = new Float32Array(1536);
  new Uint32Array(big.buffer).set(Array.from({ length: 1536 }, () => rnd() & 0xbfffffff));
  ok('f32, 1536 values, payload CRC', zframe(deflateSync(f32Bytes(big), { level: 9 }), 1536, { flags: 3 }), big);
  // bf16 (dtype 2): float32 bits are the bf16 bits << 16 (finite values: no NaN quieting)
  const h = Uint16Array.from({ length: 100 }, () => rnd() & 0x7f7f);
  ok('bf16, 100 values, payload CRC', zframe(deflateSync(new Uint8Array(h.buffer)), 100, { dt: 2, flags: 3 }),
    new Float32Array(Uint32Array.from(h, (x) => x << 16).buffer));
  ok('f32, 0 values', zframe(deflateSync(new Uint8Array(0)), 0), new Float32Array(0));

  // faults (offsets in the frame)
  const zb = z4.slice(); zb[3] ^= 0xff; // inside the deflate data
  bad('broken deflate data', zframe(zb, 4, { flags: 3 }), 'FRAME_INFLATE', 20);
  const zc = zframe(z4, 4, { flags: 3 }); zc[20 + z4.length] ^= 1;
  bad('payload CRC', zc, 'FRAME_PAYLOAD_CRC', 20 + z4.length);
  const z3 = deflateSync(f32Bytes(new Float32Array([1, 2, 3])));
  bad('stream of 3 values, dims 4', zframe(z3, 4), 'FRAME_INFLATE', 20);
  bad('stream of 4 values, dims 3', zframe(z4, 3), 'FRAME_INFLATE', 20);
  bad('stream of 1 MiB of zeros, dims 4', zframe(deflateSync(new Uint8Array(1 << 20)), 4), 'FRAME_INFLATE', 20);
  bad('stream cut inside its checksum', zframe(z4.subarray(0, z4.length - 2), 4), 'FRAME_INFLATE', 20);
  const junk = new Uint8Array(z4.length + 2); junk.set(z4); junk.set([0x55, 0xaa], z4.length);
  bad('2 bytes after the stream', zframe(junk, 4), 'FRAME_COMPRESSED_LENGTH', 20 + z4.length);
  // bytes after the stream that end with its own Adler-32 again
  const echo = new Uint8Array(z4.length + 5); echo.set(z4); echo[z4.length] = 7; echo.set(z4.subarray(z4.length - 4), z4.length + 1);
  bad('5 bytes after the stream, ending with its checksum', zframe(echo, 4), 'FRAME_COMPRESSED_LENGTH', 20 + z4.length);
  return cases;
}

// The same cases as JSON (frames in base64), for the browser page.
export const zlibCasesJson = () => JSON.stringify(zlibCases().map((c) => ({ ...c, frame: Buffer.from(c.frame).toString('base64') })));
