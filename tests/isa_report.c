/* Reports what the dispatcher chose under the current EMBD_ISA (and CPU), and checks it.
 *
 * Output (the last line is what ctest's PASS_REGULAR_EXPRESSION matches):
 *   detected: <features>
 *   enabled:  <features>
 *   impl <i>: <name> tier <tier> runnable|not runnable
 *   isa_report: EMBD_ISA=<spec> active=<name> tier=<tier> crc=ok dispatch=ok
 *
 * "crc=ok": the public embd_crc32 (dispatched path) and every runnable implementation
 * match a naive reference; "dispatch=ok": the active implementation is the best one that
 * EMBD_ISA allows (tests/testutil.h tu_check_dispatch). Either failing prints
 * crc=FAIL / dispatch=FAIL and exits 1. Exits 77 when EMBD_ISA names a tier this CPU
 * cannot run, unless run with --no-preflight. An unknown EMBD_ISA word (and with
 * --no-preflight an unsupported tier) is left to the library, which aborts with
 * "embd: EMBD_ISA: ..." on stderr (tests expect exactly that).
 */
#include "testutil.h"

int main(int argc, char **argv) {
  /* --no-preflight: leave an unsupported EMBD_ISA to the library too (which aborts). */
  const int preflight = !(argc > 1 && strcmp(argv[1], "--no-preflight") == 0);
  const int pre = preflight ? tu_isa_preflight("isa_report") : 0;
  if (pre) return pre;
  const char *env = getenv("EMBD_ISA");

  /* First library call: reads EMBD_ISA (and aborts here if it is unknown). */
  const char *active = embd_impl_active(EMBD_KERNEL_CRC32);
  char buf[512];
  printf("detected: %s\n", tu_feature_list(embd_cpu_features() & ~EMBD_CPU_KNOWN, buf, sizeof buf));
  printf("enabled:  %s\n",
         tu_feature_list(embd_cpu_features_enabled() & ~EMBD_CPU_KNOWN, buf, sizeof buf));
  const size_t n = embd_impl_count(EMBD_KERNEL_CRC32);
  int crc_ok = 1;
  static uint8_t data[70000];
  tu_rng r = {tu_seed()};
  tu_fill(&r, data, sizeof data);
  static const size_t lens[] = {0, 9, 31, 32, 33, 64, 100, 255, 256, 257, 1000, 4096, 70000};
  for (size_t i = 0; i < n; i++) {
    embd_impl_info in;
    if (embd_impl_get(EMBD_KERNEL_CRC32, i, &in) != EMBD_OK) return 1;
    printf("impl %zu: %s tier %s %s\n", i, in.name, embd_tier_name(in.tier),
           in.runnable ? "runnable" : "not runnable");
  }
  for (size_t k = 0; k < sizeof lens / sizeof lens[0]; k++) {
    const size_t off = k % 3, len = lens[k] - (lens[k] == sizeof data ? off : 0);
    const uint32_t init = tu_u32(&r);
    const uint32_t want = tu_crc32_naive(init, data + off, len);
    if (embd_crc32(init, data + off, len) != want) {
      printf("embd_crc32 wrong at length %zu\n", len);
      crc_ok = 0;
    }
    for (size_t i = 0; i < n; i++) {
      embd_crc32_fn f = embd_crc32_impl(i);
      if (f && f(init, data + off, len) != want) {
        printf("implementation %zu wrong at length %zu\n", i, len);
        crc_ok = 0;
      }
    }
  }
  if (embd_crc32(0, "123456789", 9) != 0xCBF43926u) crc_ok = 0;

  char msg[256];
  const int disp_ok = tu_check_dispatch(env, msg, sizeof msg) == 0;
  if (!disp_ok) printf("dispatch: %s\n", msg);

  embd_impl_info a = {0};
  const size_t ai = tu_active_crc32_index();
  if (ai < n) embd_impl_get(EMBD_KERNEL_CRC32, ai, &a);
  printf("isa_report: EMBD_ISA=%s active=%s tier=%s crc=%s dispatch=%s\n", env ? env : "(unset)",
         active ? active : "(null)", a.name ? embd_tier_name(a.tier) : "?", crc_ok ? "ok" : "FAIL",
         disp_ok ? "ok" : "FAIL");
  return crc_ok && disp_ok ? 0 : 1;
}
