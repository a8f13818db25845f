// The engines' stream modes (embd/codec_stream.h): decode and encode time per frame at 1, 8
// and 64 tokens per frame, msgpack mode and protobuf mode, beside protobuf-c's own unpack
// and pack of the same CodecFrame (the generated code of proto/codec.proto) and
// msgpack-c's bare msgpack_unpack (no shape checks, no ids copied out). Our reader reads
// whole common frames in one direct pass (codec_msgpack.c, mp_fast), also when they were
// assembled from chunks; the _full rows turn that pass off (the library's test hook), so
// every frame goes through the byte scanner and the second walk (mp_frame, embd's own
// decoding of the checked frame; msgpack-c's msgpack_unpack did that part until 0.4).
//
// Each iteration decodes a stream of kFrames frames fed in one chunk (frames decoded in
// place); the *_chunked variants feed 7-byte chunks (every frame assembled in the reader's
// buffer). ids are random below 151646 (Qwen2's vocabulary: 1-3 varint bytes). Counters:
// per_frame (time per frame, lower is better) and wire bytes per token.
//   taskset -c 1 build/.../bench/bench_codec_modes --benchmark_repetitions=5
#include <benchmark/benchmark.h>
#include <msgpack.h>

#include <cstring>
#include <vector>

#include "bench_common.h"
#include "codec.pb-c.h"
#include "embd/codec_stream.h"

// The library's test hook (src/codec/codec_msgpack.c): non-zero turns the direct pass off.
extern "C" int embd_msgpack_fast_off_;

namespace {

constexpr size_t kFrames = 256;

struct Stream {
  std::vector<uint32_t> ids;
  std::vector<uint8_t> bytes;
  size_t tokens = 0;
};

Stream make_stream(int mode, size_t per_frame) {
  Stream s;
  uint64_t x = 0x9E3779B97F4A7C15u;
  s.ids.resize(kFrames * per_frame);
  for (auto &v : s.ids) {
    x ^= x >> 12, x ^= x << 25, x ^= x >> 27;
    v = static_cast<uint32_t>((x * 0x2545F4914F6CDD1Du) >> 32) % 151646u;
  }
  std::vector<uint8_t> buf(per_frame * 8 + 64);
  for (size_t i = 0; i < kFrames; i++) {
    embd_codec_stream_frame f{};
    f.ids = s.ids.data() + i * per_frame;
    f.n_ids = per_frame;
    f.done = i + 1 == kFrames;
    if (f.done) f.finish_reason = "eos_token", f.finish_reason_len = 9;
    size_t w = 0;
    embd_result r = mode == 0 ? embd_codec_msgpack_encode(&f, buf.data(), buf.size(), &w)
                              : embd_codec_proto_encode(&f, buf.data(), buf.size(), &w);
    if (r != EMBD_OK) embd_bench::die("encode");
    s.bytes.insert(s.bytes.end(), buf.begin(), buf.begin() + static_cast<long>(w));
  }
  s.tokens = kFrames * per_frame;
  return s;
}

embd_result count_frame(void *user, const embd_codec_stream_frame *f) {
  *static_cast<uint64_t *>(user) += f->n_ids ? f->ids[f->n_ids - 1] : 1;
  return EMBD_OK;
}

void counters(benchmark::State &st, const Stream &s) {
  st.counters["per_frame"] =  // seconds per frame, printed with its SI prefix (n)
      benchmark::Counter(static_cast<double>(kFrames),
                         benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  st.counters["bytes_per_token"] = static_cast<double>(s.bytes.size()) / static_cast<double>(s.tokens);
}

template <int Mode>
void BM_reader(benchmark::State &st, size_t chunk) {
  const Stream s = make_stream(Mode, static_cast<size_t>(st.range(0)));
  uint64_t sink = 0;
  embd_codec_stream_options o{};  // zeroed: reserved_ (embd/common.h)
  o.max_frame_bytes = 1 << 20;
  o.on_frame = count_frame;
  o.user = &sink;
  for (auto _ : st) {
    embd_error e;
    embd_result r;
    if (Mode == 0) {
      embd_codec_msgpack_reader *m;
      if (embd_codec_msgpack_create(&o, &m) != EMBD_OK) embd_bench::die("create");
      for (size_t at = 0; at < s.bytes.size(); at += chunk)
        embd_codec_msgpack_feed(m, s.bytes.data() + at, std::min(chunk, s.bytes.size() - at), &e);
      r = embd_codec_msgpack_finish(m, &e);
      embd_codec_msgpack_destroy(m);
    } else {
      embd_codec_proto_reader *p;
      if (embd_codec_proto_create(&o, &p) != EMBD_OK) embd_bench::die("create");
      for (size_t at = 0; at < s.bytes.size(); at += chunk)
        embd_codec_proto_feed(p, s.bytes.data() + at, std::min(chunk, s.bytes.size() - at), &e);
      r = embd_codec_proto_finish(p, &e);
      embd_codec_proto_destroy(p);
    }
    if (r != EMBD_OK) embd_bench::die(e.message);
    benchmark::DoNotOptimize(sink);
  }
  counters(st, s);
}

void BM_msgpack_decode(benchmark::State &st) { BM_reader<0>(st, SIZE_MAX); }
void BM_msgpack_decode_chunked(benchmark::State &st) { BM_reader<0>(st, 7); }
void BM_msgpack_decode_full(benchmark::State &st) {
  embd_msgpack_fast_off_ = 1;
  BM_reader<0>(st, SIZE_MAX);
  embd_msgpack_fast_off_ = 0;
}
void BM_proto_decode(benchmark::State &st) { BM_reader<1>(st, SIZE_MAX); }
void BM_proto_decode_chunked(benchmark::State &st) { BM_reader<1>(st, 7); }

// protobuf-c's unpack, frame by frame (prefix read here), ids summed like the callback.
void BM_protobufc_unpack(benchmark::State &st) {
  const Stream s = make_stream(1, static_cast<size_t>(st.range(0)));
  uint64_t sink = 0;
  for (auto _ : st) {
    const uint8_t *p = s.bytes.data(), *end = p + s.bytes.size();
    while (p < end) {
      size_t n = static_cast<size_t>(p[0]) << 24 | static_cast<size_t>(p[1]) << 16 |
                 static_cast<size_t>(p[2]) << 8 | p[3];
      CodecFrame *f = codec_frame__unpack(nullptr, n, p + 4);
      if (!f) embd_bench::die("codec_frame__unpack");
      sink += f->n_ids ? f->ids[f->n_ids - 1] : 1;
      codec_frame__free_unpacked(f, nullptr);
      p += 4 + n;
    }
    benchmark::DoNotOptimize(sink);
  }
  counters(st, s);
}

// msgpack-c alone: msgpack_unpack of each frame into a reused zone, no shape checks.
void BM_msgpack_c_unpack(benchmark::State &st) {
  const Stream s = make_stream(0, static_cast<size_t>(st.range(0)));
  uint64_t sink = 0;
  msgpack_zone z;
  msgpack_zone_init(&z, MSGPACK_ZONE_CHUNK_SIZE);
  for (auto _ : st) {
    size_t off = 0;
    while (off < s.bytes.size()) {
      msgpack_object o;
      msgpack_zone_clear(&z);
      if (msgpack_unpack(reinterpret_cast<const char *>(s.bytes.data()), s.bytes.size(), &off, &z, &o) < 0)
        embd_bench::die("msgpack_unpack");
      sink += o.via.map.size;
    }
    benchmark::DoNotOptimize(sink);
  }
  msgpack_zone_destroy(&z);
  counters(st, s);
}

template <int Mode>
void BM_encode(benchmark::State &st) {
  const size_t per = static_cast<size_t>(st.range(0));
  const Stream s = make_stream(Mode, per);
  std::vector<uint8_t> out(s.bytes.size() + 64);
  for (auto _ : st) {
    size_t at = 0;
    for (size_t i = 0; i < kFrames; i++) {
      embd_codec_stream_frame f{};
      f.ids = s.ids.data() + i * per;
      f.n_ids = per;
      size_t w = 0;
      if (Mode == 0) embd_codec_msgpack_encode(&f, out.data() + at, out.size() - at, &w);
      else embd_codec_proto_encode(&f, out.data() + at, out.size() - at, &w);
      at += w;
    }
    benchmark::DoNotOptimize(out.data());
  }
  counters(st, s);
}
void BM_msgpack_encode(benchmark::State &st) { BM_encode<0>(st); }
void BM_proto_encode(benchmark::State &st) { BM_encode<1>(st); }

void BM_protobufc_pack(benchmark::State &st) {
  const size_t per = static_cast<size_t>(st.range(0));
  const Stream s = make_stream(1, per);
  std::vector<uint8_t> out(s.bytes.size() + 64);
  for (auto _ : st) {
    size_t at = 0;
    for (size_t i = 0; i < kFrames; i++) {
      CodecFrame f = CODEC_FRAME__INIT;
      f.n_ids = per;
      f.ids = const_cast<uint32_t *>(s.ids.data() + i * per);
      size_t n = codec_frame__pack(&f, out.data() + at + 4);
      out[at] = static_cast<uint8_t>(n >> 24), out[at + 1] = static_cast<uint8_t>(n >> 16);
      out[at + 2] = static_cast<uint8_t>(n >> 8), out[at + 3] = static_cast<uint8_t>(n);
      at += 4 + n;
    }
    benchmark::DoNotOptimize(out.data());
  }
  counters(st, s);
}

}  // namespace

// Interleaved, each size beside its anchor.
BENCHMARK(BM_msgpack_decode)->Arg(1);
BENCHMARK(BM_msgpack_decode_full)->Arg(1);
BENCHMARK(BM_msgpack_c_unpack)->Arg(1);
BENCHMARK(BM_msgpack_decode)->Arg(8);
BENCHMARK(BM_msgpack_decode_full)->Arg(8);
BENCHMARK(BM_msgpack_c_unpack)->Arg(8);
BENCHMARK(BM_msgpack_decode)->Arg(64);
BENCHMARK(BM_msgpack_decode_full)->Arg(64);
BENCHMARK(BM_msgpack_c_unpack)->Arg(64);
BENCHMARK(BM_proto_decode)->Arg(1)->Arg(8)->Arg(64);
BENCHMARK(BM_protobufc_unpack)->Arg(1)->Arg(8)->Arg(64);
BENCHMARK(BM_msgpack_decode_chunked)->Arg(1)->Arg(8)->Arg(64);
BENCHMARK(BM_proto_decode_chunked)->Arg(1)->Arg(8)->Arg(64);
BENCHMARK(BM_msgpack_encode)->Arg(1)->Arg(8)->Arg(64);
BENCHMARK(BM_proto_encode)->Arg(1)->Arg(8)->Arg(64);
BENCHMARK(BM_protobufc_pack)->Arg(1)->Arg(8)->Arg(64);
BENCHMARK_MAIN();
