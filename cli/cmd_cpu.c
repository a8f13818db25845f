/* embd cpu: detected CPU features and the implementation each kernel uses. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"

static const char cpu_help[] =
    "Usage: embd cpu [options]\n"
    "Prints the CPU features the library detected, those it may use (EMBD_ISA can force a\n"
    "lower tier or mask features, e.g. EMBD_ISA=scalar or EMBD_ISA=avx2,-vpclmulqdq), and\n"
    "for each kernel (crc32, bswap32, base64-decode, base64-encode, convert, convert-encode)\n"
    "the implementation in use and every implementation the library can pick, marked\n"
    "runnable or not.\n"
    "\n"
    "Options:\n"
    "  --emulated   also list the emulations compiled in for the tests (another ISA's\n"
    "               kernel built through simde, e.g. avx512-simde: never picked), marked\n"
    "               emulated\n"
    "  -h, --help   show this help\n"
    "\n"
    "Examples:\n"
    "  embd cpu\n"
    "  EMBD_ISA=scalar embd cpu\n";

static void print_features(const char *title, uint64_t f) {
  printf("%s", title);
  int any = 0;
  for (int b = 0; b < 63; b++) {
    const uint64_t bit = UINT64_C(1) << b;
    const char *n = embd_cpu_feature_name(bit);
    if ((f & bit) && n) {
      printf(" %s", n);
      any = 1;
    }
  }
  printf("%s\n", any ? "" : " (none)");
}

int cmd_cpu(int argc, char **argv) {
  static const struct option opts[] = {
      {"emulated", no_argument, 0, 'e'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
  int c, emulated = 0;
  while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
    if (c == 'e') {
      emulated = 1;
      continue;
    }
    if (c == 'h') {
      fputs(cpu_help, stdout);
      return CLI_OK;
    }
    return cli_usage("unknown option");
  }
  if (optind < argc) return cli_usage("unexpected argument '%s'", cli_esc(argv[optind]));
  printf("embd %s\n", embd_version());
  print_features("cpu features:", embd_cpu_features());
  print_features("enabled:     ", embd_cpu_features_enabled());
  const char *isa = getenv("EMBD_ISA");
  printf("EMBD_ISA:     %s\n", isa && *isa ? isa : "(unset: automatic)");
  printf("kernels:\n");
  for (int k = 0; k < EMBD_KERNEL_COUNT_; k++) {
    const char *kn = embd_kernel_name((embd_kernel)k);
    const char *active = embd_impl_active((embd_kernel)k);
    printf("  %-14s active: %s\n", kn ? kn : "?", active ? active : "?");
    const size_t n = embd_impl_count((embd_kernel)k);
    for (size_t i = 0; i < n; i++) {
      embd_impl_info ii;
      if (embd_impl_get((embd_kernel)k, i, &ii)) continue;
      /* Emulations are there for the tests, not to be chosen: listed only when asked. */
      const int emu = embd_impl_emulated((embd_kernel)k, i);
      if (emu && !emulated) continue;
      const char *tn = embd_tier_name(ii.tier);
      const int is_active = active && !strcmp(active, ii.name);
      printf("    %-20s tier %-7s %s%s\n", ii.name, tn ? tn : "?",
             ii.runnable ? (is_active || emu ? "runnable    " : "runnable") : "not runnable",
             is_active ? "  <- active" : emu ? "  emulated (for tests, never picked)" : "");
    }
  }
  return CLI_OK; /* main flushes stdout and reports a write error */
}
