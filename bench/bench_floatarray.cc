// bench_floatarray: the float-array kernel family (src/core/floatarray_kernel.h) in the
// OpenAI decoder, in one process, contenders interleaved round by round (issue 35):
//   before     optional: an older libembd.so (argv[1], e.g. built from the commit before the
//              family) loaded with dlmopen into its own namespace: "today's embd";
//   scalar / sse42 / avx2   this library with embd_isa_set(tier): the scalar tier is the
//              decoder's own loop (the default), the others its SIMD kernels (opt-in);
//   ff_double  fast_float from_chars<double> over each vector's numbers alone (no JSON);
//   simdjson   simdjson on-demand, get_double per number.
// Bodies: 100 x 1536 unit-norm float32 vectors, each number the shortest text that reads
// back (std::to_chars), compact and pretty-printed (a newline and 8 spaces before each).
// CPU time per body (CLOCK_THREAD_CPUTIME_ID: the time a loaded machine takes away is not
// counted), best of 5 per round, medians over rounds (argv[2], default 15); cycles and
// instructions per number from perf_event_open when the PMU is there, else cycles =
// ns x EMBD_BENCH_GHZ (default 2.0, the nominal clock). Also each SIMD kernel's fallback
// rate on the body (numbers it leaves to the decoder). Every contender's floats are
// checked against the body's. Run pinned: taskset -c 1 bench/bench_floatarray [before.so] [rounds]
#include <dlfcn.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <time.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <fast_float/fast_float.h>
#include <simdjson.h>

#include "embd.h"
#include "floatarray_kernel.h"  // embd_floatarray_impl_ (embd_static)
#include "unit_rows.h"

static const size_t kDims = 1536, kN = 100;

struct Body {
  std::string json;
  std::vector<std::string> nums;
  std::vector<float> want;
};

static Body make(bool pretty) {
  Body d;
  std::string &s = d.json;
  s = "{\"object\":\"list\",\"data\":[";
  std::vector<float> v(kDims);
  char tmp[32];
  for (size_t i = 0; i < kN; i++) {
    unit_row(i, v.data(), kDims);
    d.want.insert(d.want.end(), v.begin(), v.end());
    s += i ? "," : "";
    s += "{\"object\":\"embedding\",\"index\":" + std::to_string(i) + ",\"embedding\":[";
    std::string nums;
    for (size_t j = 0; j < kDims; j++) {
      auto r = std::to_chars(tmp, tmp + sizeof tmp - 1, v[j]);
      *r.ptr = 0;
      nums += (j ? "," : "") + std::string(tmp);
      s += (j ? "," : "") + std::string(pretty ? "\n        " : "") + tmp;
    }
    s += pretty ? "\n      ]" : "]";
    d.nums.push_back(nums);
    s += "}";
  }
  s += "],\"model\":\"text-embedding-3-small\",\"usage\":{\"prompt_tokens\":8,\"total_tokens\":8}}";
  s.reserve(s.size() + 64);
  return d;
}

static double cpu_ns() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec * 1e9 + t.tv_nsec;
}

static int perf_open(uint64_t config) {
  perf_event_attr a;
  memset(&a, 0, sizeof a);
  a.type = PERF_TYPE_HARDWARE;
  a.size = sizeof a;
  a.config = config;
  a.disabled = 1;
  a.exclude_kernel = 1;
  a.exclude_hv = 1;
  return (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
}

typedef embd_result (*decode_fn)(embd_openai_embeddings *, const char *, size_t, const embd_openai_options *,
                                 embd_error *);
typedef void (*init_fn)(embd_openai_embeddings *);

int main(int argc, char **argv) {
  const char *before = argc > 1 && *argv[1] ? argv[1] : nullptr;
  const int rounds = argc > 2 ? atoi(argv[2]) : 15;
  const char *ghz_s = getenv("EMBD_BENCH_GHZ");
  const double ghz = ghz_s ? atof(ghz_s) : 2.0;
  void *h = before ? dlmopen(LM_ID_NEWLM, before, RTLD_NOW | RTLD_LOCAL) : nullptr;
  if (before && !h) {
    fprintf(stderr, "dlmopen: %s\n", dlerror());
    return 1;
  }
  decode_fn old_decode = h ? (decode_fn)dlsym(h, "embd_openai_decode") : nullptr;
  init_fn old_init = h ? (init_fn)dlsym(h, "embd_openai_init") : nullptr;
  const char *(*old_version)(void) = h ? (const char *(*)(void))dlsym(h, "embd_version") : nullptr;
  if (h && (!old_decode || !old_init)) return 1;
  FILE *ci = fopen("/proc/cpuinfo", "r");
  char line[256];
  while (ci && fgets(line, sizeof line, ci))
    if (!strncmp(line, "model name", 10) || !strncmp(line, "cpu family", 10) || !strncmp(line, "model\t", 6)) fputs(line, stdout);
  if (ci) fclose(ci);
  printf("before: %s (%s); after: this binary, embd %s\n", before ? before : "(none)",
         old_version ? old_version() : "-", embd_version());
  int fc = perf_open(PERF_COUNT_HW_CPU_CYCLES), fi = perf_open(PERF_COUNT_HW_INSTRUCTIONS);
  printf("perf counters: %s\n", fc >= 0 && fi >= 0 ? "cycles and instructions" : "unavailable (cycles = CPU ns x EMBD_BENCH_GHZ)");

  const char *names[] = {"before", "scalar", "sse42", "avx2", "ff_double", "simdjson"};
  const int nc = 6;
  for (int pretty = 0; pretty < 2; pretty++) {
    Body b = make(pretty);
    const size_t nnum = kN * kDims;
    // correctness and the fallback rate (numbers the kernel left to the decoder's own path)
    for (size_t impl = 1; impl < embd_floatarray_count_(); impl++) {
      embd_floatarray_fn fn = embd_floatarray_impl_(impl);
      if (!fn) continue;
      size_t taken = 0, calls = 0;
      const uint8_t *base = (const uint8_t *)b.json.data(), *end = base + b.json.size();
      for (size_t i = 0; i < kN; i++) {
        const std::string key = "\"index\":" + std::to_string(i) + ",\"embedding\":[";
        const uint8_t *p = (const uint8_t *)strstr((const char *)base, key.c_str()) + key.size();
        std::vector<float> out(kDims);
        size_t got = 0;
        while (got < kDims) {
          while (*p == ' ' || *p == '\n' || *p == ',') p++;
          const uint8_t *q;
          size_t k = fn(base, p, end, out.data() + got, kDims - got, &q);
          calls++;
          if (k == 0) {  // the decoder parses this one: skip it
            while (*p != ',' && *p != ']') p++;
            got++;
            continue;
          }
          if (memcmp(out.data() + got, b.want.data() + i * kDims + got, 4 * k)) {
            printf("MISMATCH impl %zu row %zu\n", impl, i);
            return 1;
          }
          taken += k, got += k, p = q;
        }
      }
      printf("%s: %s takes %zu of %zu numbers (fallback %.3f%%: the last of each vector and any it declines), %zu calls\n",
             pretty ? "pretty" : "compact", embd_floatarray_name_(impl), taken, nnum, 100.0 * (nnum - taken) / nnum, calls);
    }
    std::vector<std::vector<double>> t(nc), cyc(nc), ins(nc);
    embd_openai_embeddings eo, en;
    if (old_init) old_init(&eo);
    embd_openai_init(&en);
    for (int r = 0; r < rounds; r++) {
      for (int c = 0; c < nc; c++) {
        if (c == 0 && !old_decode) continue;
        if (c >= 1 && c <= 3 && embd_isa_set(names[c]) != EMBD_OK) continue;
        const int reps = 5;
        double best = 1e30, bc = 0, bi = 0;
        for (int k = 0; k < reps; k++) {
          if (fc >= 0) ioctl(fc, PERF_EVENT_IOC_RESET, 0), ioctl(fi, PERF_EVENT_IOC_RESET, 0),
              ioctl(fc, PERF_EVENT_IOC_ENABLE, 0), ioctl(fi, PERF_EVENT_IOC_ENABLE, 0);
          double t0 = cpu_ns();
          bool ok = true;
          if (c == 0) ok = old_decode(&eo, b.json.data(), b.json.size(), nullptr, nullptr) == EMBD_OK;
          else if (c <= 3) ok = embd_openai_decode(&en, b.json.data(), b.json.size(), nullptr, nullptr) == EMBD_OK;
          else if (c == 4) {
            double s = 0;
            for (const std::string &ns : b.nums) {
              const char *p = ns.data(), *e = p + ns.size();
              while (p < e) {
                double d;
                auto rr = fast_float::from_chars(p, e, d);
                s += d;
                p = rr.ptr + 1;
              }
            }
            ok = s != 12345.678;
          } else {
            static simdjson::ondemand::parser parser;
            simdjson::padded_string_view v(b.json.data(), b.json.size(), b.json.capacity());
            auto doc = parser.iterate(v);
            static std::vector<float> out;
            out.clear();
            out.reserve(nnum);
            for (auto item : doc["data"]) {
              for (auto x : item["embedding"].get_array()) out.push_back((float)double(x.get_double()));
            }
            ok = out.size() == nnum && !memcmp(out.data(), b.want.data(), 4 * nnum);
          }
          double dt = cpu_ns() - t0;
          uint64_t cc = 0, ii = 0;
          if (fc >= 0) {
            ioctl(fc, PERF_EVENT_IOC_DISABLE, 0), ioctl(fi, PERF_EVENT_IOC_DISABLE, 0);
            if (read(fc, &cc, 8) != 8 || read(fi, &ii, 8) != 8) cc = ii = 0;
          }
          if (!ok) {
            printf("%s failed\n", names[c]);
            return 1;
          }
          if (dt < best) best = dt, bc = (double)cc, bi = (double)ii;
        }
        t[c].push_back(best), cyc[c].push_back(bc), ins[c].push_back(bi);
      }
    }
    embd_isa_set(nullptr);
    auto med = [](std::vector<double> v) {
      if (v.empty()) return 0.0;
      std::sort(v.begin(), v.end());
      return v[v.size() / 2];
    };
    // every contender's floats against the body's
    if ((old_decode && memcmp(eo.values, b.want.data(), 4 * nnum)) || memcmp(en.values, b.want.data(), 4 * nnum)) {
      printf("decoded floats differ\n");
      return 1;
    }
    const double tb = old_decode ? med(t[0]) : med(t[1]);  // "vs before": against scalar without one
    printf("%s body: %zu bytes, %zu numbers (%.2f bytes/number); medians of %d rounds (best of 5 each), CPU time\n",
           pretty ? "pretty" : "compact", b.json.size(), nnum, (double)b.json.size() / nnum, rounds);
    printf("  %-10s %10s %9s %8s %9s %9s %10s\n", "contender", "us/vector", "GB/s", "ns/num", "cyc/num", "ins/num",
           "vs before");
    for (int c = 0; c < nc; c++) {
      if (t[c].empty()) continue;
      const double tm = med(t[c]), cm = med(cyc[c]), im = med(ins[c]);
      printf("  %-10s %10.2f %9.3f %8.2f %9.1f %9.1f %9.2fx\n", names[c], tm / 1e3 / kN, b.json.size() / tm,
             tm / nnum, cm ? cm / nnum : tm / nnum * ghz, im / nnum, tb / tm);
    }
  }
  return 0;
}
