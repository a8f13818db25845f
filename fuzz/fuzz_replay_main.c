/* A plain main for the fuzz targets: runs every file named on the command line, and every
 * regular file in every directory named there (not recursive, sorted by name), through
 * LLVMFuzzerTestOneInput once. Built with any compiler and without libFuzzer, so that the
 * seed corpus runs as a normal ctest (and under valgrind or qemu, where libFuzzer does
 * not). A target reports a failure by aborting, as under libFuzzer. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static size_t g_runs;

static int run_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    perror(path);
    return 1;
  }
  size_t cap = 4096, n = 0;
  uint8_t *buf = malloc(cap);
  if (!buf) abort();
  for (;;) {
    if (n == cap) {
      cap *= 2;
      uint8_t *nb = realloc(buf, cap);
      if (!nb) abort();
      buf = nb;
    }
    size_t got = fread(buf + n, 1, cap - n, f);
    n += got;
    if (got == 0) break;
  }
  int err = ferror(f);
  fclose(f);
  if (err) {
    fprintf(stderr, "%s: read error\n", path);
    free(buf);
    return 1;
  }
  /* An exact-size copy, as libFuzzer passes it: ASan sees reads past the end. */
  uint8_t *exact = malloc(n ? n : 1);
  if (!exact) abort();
  if (n) memcpy(exact, buf, n);
  free(buf);
  LLVMFuzzerTestOneInput(exact, n);
  free(exact);
  g_runs++;
  return 0;
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static int run_dir(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) {
    perror(dir);
    return 1;
  }
  char **names = NULL;
  size_t count = 0, cap = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.') continue;
    if (count == cap) {
      cap = cap ? cap * 2 : 64;
      char **nn = realloc(names, cap * sizeof *names);
      if (!nn) abort();
      names = nn;
    }
    size_t len = strlen(dir) + 1 + strlen(e->d_name) + 1;
    names[count] = malloc(len);
    if (!names[count]) abort();
    snprintf(names[count], len, "%s/%s", dir, e->d_name);
    count++;
  }
  closedir(d);
  if (count) qsort(names, count, sizeof *names, cmp_str);
  int rc = 0;
  for (size_t i = 0; i < count; i++) {
    struct stat st;
    if (stat(names[i], &st) == 0 && S_ISREG(st.st_mode)) rc |= run_file(names[i]);
    free(names[i]);
  }
  free(names);
  return rc;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s <corpus dir or file>...\n", argv[0]);
    return 2;
  }
  int rc = 0;
  for (int i = 1; i < argc; i++) {
    struct stat st;
    if (stat(argv[i], &st) != 0) {
      perror(argv[i]);
      rc = 1;
    } else if (S_ISDIR(st.st_mode)) {
      rc |= run_dir(argv[i]);
    } else {
      rc |= run_file(argv[i]);
    }
  }
  if (g_runs == 0) {
    fprintf(stderr, "%s: no inputs found\n", argv[0]);
    rc = 1;
  }
  printf("%s: %zu inputs, %s\n", argv[0], g_runs, rc ? "with errors" : "all passed");
  return rc;
}
