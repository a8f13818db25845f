/* embd serve: runs embd-serve (serve/main.c), a separate program so that libmicrohttpd and
 * libcurl are dependencies of the front only, never of `embd` or the library. It is looked
 * for next to this executable (the build tree and `make install` put it there), then on
 * PATH. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"

#define SERVE_MISSING                                                                   \
  "embd serve: embd-serve is not part of this build: it needs libmicrohttpd and libcurl " \
  "(Debian: apt-get install libmicrohttpd-dev libcurl4-openssl-dev), then configure and " \
  "build again (CMake option EMBD_BUILD_SERVE, on by default)\n"

int cmd_serve(int argc, char **argv) {
  char **args = calloc((size_t)argc + 1, sizeof *args);
  if (!args) return CLI_EINTERNAL;
  args[0] = "embd-serve";
  for (int i = 1; i < argc; i++) args[i] = argv[i];
  args[argc] = NULL;
  /* the directory of /proc/self/exe (Linux); elsewhere, PATH alone */
  char self[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 32);
  if (n > 0) {
    self[n] = '\0';
    char *slash = strrchr(self, '/');
    if (slash) {
      strcpy(slash + 1, "embd-serve");
      if (access(self, X_OK) == 0) execv(self, args);
    }
  }
  execvp("embd-serve", args);
  const int e = errno;
  free(args);
  if (e == ENOENT) {
#ifdef EMBD_CLI_NO_SERVE
    fputs(SERVE_MISSING, stderr);
#else
    fputs("embd serve: embd-serve was not found next to embd or on PATH (it is built with embd "
          "when libmicrohttpd and libcurl are found; install it alongside)\n",
          stderr);
#endif
    return CLI_EUSAGE;
  }
  fprintf(stderr, "embd serve: cannot run embd-serve: %s\n", strerror(e));
  return CLI_EIO;
}
