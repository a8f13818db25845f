// Frame, batch and stream codec throughput for 1536-dim embeddings, beside memcpy of the
// same bytes, in one binary so that they share the machine's state.
//
// Names:
//   frame/view/1536, frame/copy/1536      decode one frame: zero-copy view / copy out
//   memcpy/6144                           its payload bytes
//   batch/decode/1000x1536                iterator + embd_batch_frame_decode into one array
//   memcpy/6144000                        the batch's payload bytes
//   stream/1500B/{on_frame,dest}/1000x1536  the stream decoder fed the batch in 1,500-byte
//                                         chunks into one array: on_frame decodes each
//                                         assembled frame / dest decodes as bytes arrive
//   memcpy/<batch bytes>                  the whole batch's bytes
//   frame/encode/1536, batch/encode/1000x1536   embd_frame_encode_f32 / embd_batch_encode_f32
//   frame/zlib-roundtrip/{random,sparse}/1536   encode with EMBD_FRAME_ZLIB (level 6) +
//                                         decode, random floats / 1 value in 32 non-zero
//   frame/zlib-decode/{random,sparse}/1536   embd_frame_decode of those prepared frames
//   frame/zlib-decode-zlib-only/...       the same with the library's test hook
//                                         embd_inflate_zlib_only_ set: zlib's inflate
//                                         alone, the frame decoder as it was before
//                                         libdeflate (issue 15's "2x today" baseline)
//   zlib/inflate/{random,sparse}/1536     anchor, what embd did before libdeflate:
//                                         inflateInit + inflate + inflateEnd of the same
//                                         zlib stream into the same buffer (zlib's
//                                         uncompress), no header or byte-order work
//   libdeflate/zlib/{random,sparse}/1536  ceiling: libdeflate_zlib_decompress of the same
//                                         stream, one decompressor allocated up front
//   libdeflate/zlib-alloc/...             the same, a decompressor allocated per frame
// Bytes per second counts payload bytes (dims * 4 per frame; memcpy: the bytes copied);
// items_per_second is frames per second and time_per_frame its inverse (seconds in JSON).
// Buffers are 64-byte aligned, so the frame payload (at +16) can be viewed in place.
//
// Every path is checked once at start-up (decoded floats bit-equal to the input, encoders
// byte-equal to the prepared frames); a mismatch aborts.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "embd.h"

#include <zlib.h>
#ifdef EMBD_BENCH_HAVE_LIBDEFLATE
#include <libdeflate.h>
#endif

#include "bench_common.h"

// The library's test hook (src/wire/wire.h, hidden: reachable because this benchmark links
// the static library): non-zero, compressed payloads are decoded by zlib's inflate alone.
extern "C" int embd_inflate_zlib_only_;

namespace {
using namespace embd_bench;

constexpr size_t kDims = 1536;
constexpr size_t kCount = 1000;
constexpr size_t kPayload = kDims * 4;
constexpr size_t kChunk = 1500;

float *g_vec;       // one random vector
float *g_sparse;    // one mostly-zero vector
float *g_vecs;      // kCount random vectors
uint8_t *g_frame;   // g_vec encoded, flags 0
size_t g_frame_len;
uint8_t *g_batch;   // g_vecs encoded, flags 0
size_t g_batch_len;
uint8_t *g_enc;     // encoder / zlib output
size_t g_enc_cap;
float *g_out;       // decode output, kCount * kDims floats
uint8_t *g_dst;     // memcpy destination
uint8_t *g_zframe[2];  // g_vec / g_sparse encoded with EMBD_FRAME_ZLIB
size_t g_zframe_len[2];

template <typename T>
T *alloc_aligned(size_t bytes) {
  void *p = std::aligned_alloc(kAlign, (bytes + kAlign - 1) / kAlign * kAlign);
  if (!p) {
    std::fprintf(stderr, "bench_frame: out of memory\n");
    std::abort();
  }
  return static_cast<T *>(p);
}

void must(embd_result r, const char *what) {
  if (r != EMBD_OK) die(std::string(what) + ": " + embd_strerror(r));
}

uint64_t g_x = 0x9E3779B97F4A7C15u;  // xorshift64*, fixed seed: reproducible input
uint64_t next_rand() {
  g_x ^= g_x >> 12;
  g_x ^= g_x << 25;
  g_x ^= g_x >> 27;
  return g_x * 0x2545F4914F6CDD1Du;
}
// Uniform in [-1, 1): embedding-like values with full-entropy mantissas.
float rand_float() { return static_cast<float>(static_cast<double>(next_rand() >> 11) * 0x1p-52 - 1.0); }

void same_bits(const float *a, const float *b, size_t n, const std::string &what) {
  if (std::memcmp(a, b, n * sizeof(float)) != 0) die(what + ": decoded floats differ from the input");
}

void set_counters(benchmark::State &state, size_t frames, size_t bytes) {
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(bytes));
  if (frames) {
    state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(frames));
    // Inverted rate: seconds per frame (the console prints it with an SI prefix, "71.3ns").
    state.counters["time_per_frame"] = benchmark::Counter(
        static_cast<double>(frames),
        benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  }
}

// ---- decoders ------------------------------------------------------------------------
const float *frame_view() {
  const float *v = nullptr;
  if (embd_frame_view(g_frame, g_frame_len, nullptr, &v, nullptr, nullptr) != EMBD_OK) return nullptr;
  return v;
}

embd_result frame_copy(float *out) {
  return embd_frame_decode(g_frame, g_frame_len, nullptr, out, kDims, nullptr, nullptr);
}

embd_result batch_decode(float *out) {
  embd_batch_iter it;
  embd_batch_frame f;
  embd_result r = embd_batch_iter_init(&it, g_batch, g_batch_len, nullptr, nullptr);
  while (r == EMBD_OK && (r = embd_batch_next(&it, &f, nullptr)) == EMBD_OK)
    r = embd_batch_frame_decode(&f, out + static_cast<size_t>(f.index) * kDims, kDims, nullptr);
  return r == EMBD_BATCH_END ? EMBD_OK : r;
}

embd_result stream_cb(void *user, const embd_batch_frame *f) {
  float *out = static_cast<float *>(user);
  if (f->index >= kCount) return EMBD_ERR_BATCH_COUNT;
  return embd_batch_frame_decode(f, out + static_cast<size_t>(f->index) * kDims, kDims, nullptr);
}

float *stream_dest(void *user, uint32_t index, const embd_frame_info *info) {
  if (index >= kCount || info->dims != kDims) return nullptr;  // on_frame-less: cannot happen
  return static_cast<float *>(user) + static_cast<size_t>(index) * kDims;
}

// dest: values written into `out` as the bytes arrive; otherwise on_frame decodes each
// (assembled) frame.
embd_result stream_decode(float *out, uint32_t *frames, bool dest) {
  embd_stream_options o{};
  o.max_dims = kDims;
  o.expected_dims = kDims;
  o.batch = 1;
  o.on_frame = dest ? nullptr : stream_cb;
  o.dest = dest ? stream_dest : nullptr;
  o.user = out;
  embd_stream *s;
  embd_result r = embd_stream_create(&o, &s);
  if (r != EMBD_OK) return r;
  for (size_t at = 0; r == EMBD_OK && at < g_batch_len; at += kChunk)
    r = embd_stream_feed(s, g_batch + at, g_batch_len - at < kChunk ? g_batch_len - at : kChunk,
                         nullptr);
  if (r == EMBD_OK) r = embd_stream_finish(s, nullptr);
  if (frames) *frames = embd_stream_frames(s);
  embd_stream_destroy(s);
  return r;
}

embd_result zlib_roundtrip(const float *v, float *out, size_t *zlen) {
  embd_frame_encode_options eo{};
  eo.flags = EMBD_FRAME_ZLIB;
  size_t w;
  embd_result r = embd_frame_encode_f32(v, kDims, &eo, g_enc, g_enc_cap, &w);
  if (r != EMBD_OK) return r;
  if (zlen) *zlen = w;
  return embd_frame_decode(g_enc, w, nullptr, out, kDims, nullptr, nullptr);
}

// ---- benchmarks ----------------------------------------------------------------------
void bm_frame_view(benchmark::State &state) {
  clean_upper_state();
  for (auto _ : state) {
    const float *v = frame_view();
    benchmark::DoNotOptimize(v);
  }
  set_counters(state, 1, kPayload);
}

void bm_frame_copy(benchmark::State &state) {
  clean_upper_state();
  for (auto _ : state) {
    embd_result r = frame_copy(g_out);
    benchmark::DoNotOptimize(r);
    benchmark::ClobberMemory();
  }
  set_counters(state, 1, kPayload);
}

void bm_batch_decode(benchmark::State &state) {
  clean_upper_state();
  for (auto _ : state) {
    embd_result r = batch_decode(g_out);
    benchmark::DoNotOptimize(r);
    benchmark::ClobberMemory();
  }
  set_counters(state, kCount, kCount * kPayload);
}

void bm_stream(benchmark::State &state, bool dest) {
  clean_upper_state();
  for (auto _ : state) {
    embd_result r = stream_decode(g_out, nullptr, dest);
    benchmark::DoNotOptimize(r);
    benchmark::ClobberMemory();
  }
  set_counters(state, kCount, kCount * kPayload);
}

void bm_frame_encode(benchmark::State &state) {
  clean_upper_state();
  for (auto _ : state) {
    size_t w;
    embd_result r = embd_frame_encode_f32(g_vec, kDims, nullptr, g_enc, g_enc_cap, &w);
    benchmark::DoNotOptimize(r);
    benchmark::DoNotOptimize(w);
    benchmark::ClobberMemory();
  }
  set_counters(state, 1, kPayload);
}

void bm_batch_encode(benchmark::State &state) {
  clean_upper_state();
  for (auto _ : state) {
    size_t w;
    embd_result r = embd_batch_encode_f32(g_vecs, kCount, kDims, nullptr, g_enc, g_enc_cap, &w);
    benchmark::DoNotOptimize(r);
    benchmark::DoNotOptimize(w);
    benchmark::ClobberMemory();
  }
  set_counters(state, kCount, kCount * kPayload);
}

void bm_zlib_roundtrip(benchmark::State &state, const float *v) {
  clean_upper_state();
  for (auto _ : state) {
    embd_result r = zlib_roundtrip(v, g_out, nullptr);
    benchmark::DoNotOptimize(r);
    benchmark::ClobberMemory();
  }
  set_counters(state, 1, kPayload);
}

void bm_zlib_decode(benchmark::State &state, int which, int zlib_only) {
  clean_upper_state();
  embd_inflate_zlib_only_ = zlib_only;
  for (auto _ : state) {
    embd_result r = embd_frame_decode(g_zframe[which], g_zframe_len[which], nullptr, g_out, kDims,
                                      nullptr, nullptr);
    benchmark::DoNotOptimize(r);
    benchmark::ClobberMemory();
  }
  embd_inflate_zlib_only_ = 0;
  set_counters(state, 1, kPayload);
}

// The zlib stream of a prepared compressed frame: its length at 16-19, the bytes from 20.
const uint8_t *zstream(int which, size_t *n) {
  const uint8_t *f = g_zframe[which];
  *n = static_cast<size_t>(f[16]) | static_cast<size_t>(f[17]) << 8 |
       static_cast<size_t>(f[18]) << 16 | static_cast<size_t>(f[19]) << 24;
  return f + 20;
}

void bm_zlib_inflate(benchmark::State &state, int which) {
  clean_upper_state();
  size_t n;
  const uint8_t *z = zstream(which, &n);
  for (auto _ : state) {
    uLongf got = kPayload;
    int r = uncompress(reinterpret_cast<Bytef *>(g_out), &got, z, static_cast<uLong>(n));
    if (r != Z_OK || got != kPayload) die("zlib/inflate: uncompress failed");
    benchmark::ClobberMemory();
  }
  set_counters(state, 1, kPayload);
}

#ifdef EMBD_BENCH_HAVE_LIBDEFLATE
void bm_libdeflate(benchmark::State &state, int which) {
  clean_upper_state();
  size_t n;
  const uint8_t *z = zstream(which, &n);
  libdeflate_decompressor *d = libdeflate_alloc_decompressor();
  if (!d) die("libdeflate_alloc_decompressor failed");
  for (auto _ : state) {
    libdeflate_result r = libdeflate_zlib_decompress(d, z, n, g_out, kPayload, nullptr);
    if (r != LIBDEFLATE_SUCCESS) die("libdeflate/zlib: decompress failed");
    benchmark::ClobberMemory();
  }
  libdeflate_free_decompressor(d);
  set_counters(state, 1, kPayload);
}

// The same with a decompressor allocated and freed per frame, as embd_frame_decode does.
void bm_libdeflate_alloc(benchmark::State &state, int which) {
  clean_upper_state();
  size_t n;
  const uint8_t *z = zstream(which, &n);
  for (auto _ : state) {
    libdeflate_decompressor *d = libdeflate_alloc_decompressor();
    if (!d) die("libdeflate_alloc_decompressor failed");
    libdeflate_result r = libdeflate_zlib_decompress(d, z, n, g_out, kPayload, nullptr);
    libdeflate_free_decompressor(d);
    if (r != LIBDEFLATE_SUCCESS) die("libdeflate/zlib: decompress failed");
    benchmark::ClobberMemory();
  }
  set_counters(state, 1, kPayload);
}
#endif

void bm_memcpy(benchmark::State &state, const uint8_t *src, size_t n, size_t frames) {
  clean_upper_state();
  for (auto _ : state) {
    std::memcpy(g_dst, src, n);
    benchmark::DoNotOptimize(g_dst);
    benchmark::ClobberMemory();
  }
  set_counters(state, frames, n);
}

// ---- start-up checks -----------------------------------------------------------------
void check_all(size_t *zrand, size_t *zsparse) {
  const float *v = frame_view();
  if (!v) die("embd_frame_view failed on the prepared frame (alignment?)");
  if (reinterpret_cast<const uint8_t *>(v) != g_frame + EMBD_FRAME_HEADER_SIZE)
    die("the view does not point into the frame");
  same_bits(v, g_vec, kDims, "frame/view");

  std::memset(g_out, 0xA5, kDims * sizeof(float));
  must(frame_copy(g_out), "frame/copy");
  same_bits(g_out, g_vec, kDims, "frame/copy");

  std::memset(g_out, 0xA5, kCount * kDims * sizeof(float));
  must(batch_decode(g_out), "batch/decode");
  same_bits(g_out, g_vecs, kCount * kDims, "batch/decode");

  for (bool dest : {false, true}) {
    std::memset(g_out, 0xA5, kCount * kDims * sizeof(float));
    uint32_t frames = 0;
    must(stream_decode(g_out, &frames, dest), "stream");
    if (frames != kCount) die("stream: " + std::to_string(frames) + " frames");
    same_bits(g_out, g_vecs, kCount * kDims, "stream");
  }

  size_t w;
  must(embd_frame_encode_f32(g_vec, kDims, nullptr, g_enc, g_enc_cap, &w), "frame/encode");
  if (w != g_frame_len || std::memcmp(g_enc, g_frame, w) != 0) die("frame/encode: bytes differ");
  must(embd_batch_encode_f32(g_vecs, kCount, kDims, nullptr, g_enc, g_enc_cap, &w), "batch/encode");
  if (w != g_batch_len || std::memcmp(g_enc, g_batch, w) != 0) die("batch/encode: bytes differ");

  std::memset(g_out, 0xA5, kDims * sizeof(float));
  must(zlib_roundtrip(g_vec, g_out, zrand), "zlib-roundtrip/random");
  same_bits(g_out, g_vec, kDims, "zlib-roundtrip/random");
  std::memset(g_out, 0xA5, kDims * sizeof(float));
  must(zlib_roundtrip(g_sparse, g_out, zsparse), "zlib-roundtrip/sparse");
  same_bits(g_out, g_sparse, kDims, "zlib-roundtrip/sparse");

  for (int which = 0; which < 2; which++) {
    const float *want = which ? g_sparse : g_vec;
    std::memset(g_out, 0xA5, kDims * sizeof(float));
    must(embd_frame_decode(g_zframe[which], g_zframe_len[which], nullptr, g_out, kDims, nullptr,
                           nullptr),
         "zlib-decode");
    same_bits(g_out, want, kDims, "zlib-decode");
  }
}

}  // namespace

int main(int argc, char **argv) {
  g_vec = alloc_aligned<float>(kPayload);
  g_sparse = alloc_aligned<float>(kPayload);
  g_vecs = alloc_aligned<float>(kCount * kPayload);
  g_out = alloc_aligned<float>(kCount * kPayload);
  for (size_t i = 0; i < kDims; i++) g_vec[i] = rand_float();
  for (size_t i = 0; i < kDims; i++) g_sparse[i] = (next_rand() >> 59) == 0 ? rand_float() : 0.0f;
  for (size_t i = 0; i < kCount * kDims; i++) g_vecs[i] = rand_float();

  size_t cap;
  must(embd_frame_size(kDims, 0, &cap), "embd_frame_size");
  g_frame = alloc_aligned<uint8_t>(cap);
  must(embd_frame_encode_f32(g_vec, kDims, nullptr, g_frame, cap, &g_frame_len), "frame encode");
  must(embd_batch_size(kCount, kDims, 0, &cap), "embd_batch_size");
  g_batch = alloc_aligned<uint8_t>(cap);
  must(embd_batch_encode_f32(g_vecs, kCount, kDims, nullptr, g_batch, cap, &g_batch_len),
       "batch encode");
  size_t zcap;
  must(embd_frame_size(kDims, EMBD_FRAME_ZLIB, &zcap), "embd_frame_size zlib");
  g_enc_cap = cap > zcap ? cap : zcap;
  g_enc = alloc_aligned<uint8_t>(g_enc_cap);
  g_dst = alloc_aligned<uint8_t>(g_batch_len);
  std::memset(g_dst, 0, g_batch_len);

  for (int which = 0; which < 2; which++) {
    embd_frame_encode_options eo{};
    eo.flags = EMBD_FRAME_ZLIB;
    g_zframe[which] = alloc_aligned<uint8_t>(zcap);
    must(embd_frame_encode_f32(which ? g_sparse : g_vec, kDims, &eo, g_zframe[which], zcap,
                               &g_zframe_len[which]),
         "zlib frame encode");
  }

  size_t zrand = 0, zsparse = 0;
  check_all(&zrand, &zsparse);

  benchmark::AddCustomContext("embd_version", embd_version());
  benchmark::AddCustomContext("embd_crc32_active", embd_impl_active(EMBD_KERNEL_CRC32));
  benchmark::AddCustomContext("embd_bswap32_active", embd_impl_active(EMBD_KERNEL_BSWAP32));
  benchmark::AddCustomContext("batch_bytes", std::to_string(g_batch_len));
  benchmark::AddCustomContext("zlib_frame_bytes_random", std::to_string(zrand));
  benchmark::AddCustomContext("zlib_frame_bytes_sparse", std::to_string(zsparse));

  const std::string batch_tail = std::to_string(kCount) + "x" + std::to_string(kDims);
  benchmark::RegisterBenchmark("frame/view/1536", bm_frame_view);
  benchmark::RegisterBenchmark("frame/copy/1536", bm_frame_copy);
  benchmark::RegisterBenchmark("memcpy/6144", bm_memcpy,
                               g_frame + EMBD_FRAME_HEADER_SIZE, kPayload, size_t{1});
  benchmark::RegisterBenchmark(("batch/decode/" + batch_tail).c_str(), bm_batch_decode);
  // The payload bytes of the batch, as one contiguous copy of the same total.
  benchmark::RegisterBenchmark(("memcpy/" + std::to_string(kCount * kPayload)).c_str(), bm_memcpy,
                               g_batch, kCount * kPayload, kCount);
  benchmark::RegisterBenchmark(
      ("stream/" + std::to_string(kChunk) + "B/on_frame/" + batch_tail).c_str(), bm_stream, false);
  benchmark::RegisterBenchmark(("stream/" + std::to_string(kChunk) + "B/dest/" + batch_tail).c_str(),
                               bm_stream, true);
  benchmark::RegisterBenchmark(("memcpy/" + std::to_string(g_batch_len)).c_str(), bm_memcpy,
                               g_batch, g_batch_len, kCount);
  benchmark::RegisterBenchmark("frame/encode/1536", bm_frame_encode);
  benchmark::RegisterBenchmark(("batch/encode/" + batch_tail).c_str(), bm_batch_encode);
  benchmark::RegisterBenchmark("frame/zlib-roundtrip/random/1536", bm_zlib_roundtrip,
                               static_cast<const float *>(g_vec));
  benchmark::RegisterBenchmark("frame/zlib-roundtrip/sparse/1536", bm_zlib_roundtrip,
                               static_cast<const float *>(g_sparse));
  // Decode-only rows, each beside its anchor (interleaved: embd, zlib, libdeflate).
  for (int which = 0; which < 2; which++) {
    const std::string kind = which ? "sparse" : "random";
    benchmark::RegisterBenchmark(("frame/zlib-decode/" + kind + "/1536").c_str(), bm_zlib_decode,
                                 which, 0);
    benchmark::RegisterBenchmark(("frame/zlib-decode-zlib-only/" + kind + "/1536").c_str(),
                                 bm_zlib_decode, which, 1);
    benchmark::RegisterBenchmark(("zlib/inflate/" + kind + "/1536").c_str(), bm_zlib_inflate, which);
#ifdef EMBD_BENCH_HAVE_LIBDEFLATE
    benchmark::RegisterBenchmark(("libdeflate/zlib/" + kind + "/1536").c_str(), bm_libdeflate,
                                 which);
    benchmark::RegisterBenchmark(("libdeflate/zlib-alloc/" + kind + "/1536").c_str(),
                                 bm_libdeflate_alloc, which);
#endif
  }

  if (run_registered(argc, argv)) return 1;
  std::free(g_vec);
  std::free(g_sparse);
  std::free(g_vecs);
  std::free(g_out);
  std::free(g_frame);
  std::free(g_batch);
  std::free(g_enc);
  std::free(g_dst);
  std::free(g_zframe[0]);
  std::free(g_zframe[1]);
  return 0;
}
