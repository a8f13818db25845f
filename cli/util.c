/* embd CLI: messages, option parsing, input/output, progress bar, float text (the output
 * formats: formats.c). */
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* The library's growth of big buffers (asks for transparent huge pages before the first
 * byte lands: a 165 MB body from a pipe paid ~40,000 4 KiB first-touch faults through
 * realloc). A header of static inline code, not an internal symbol: the tool still links
 * only the public API. */
#include "../src/core/mem.h"

const char *cli_cmd = NULL;

static void vmsg(const char *fmt, va_list ap) {
  fflush(stdout);
  if (cli_cmd) fprintf(stderr, "embd %s: ", cli_cmd);
  else fputs("embd: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
}

void cli_msg(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vmsg(fmt, ap);
  va_end(ap);
}

int cli_usage(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vmsg(fmt, ap);
  va_end(ap);
  if (cli_cmd) fprintf(stderr, "Try 'embd %s --help'.\n", cli_cmd);
  else fputs("Try 'embd --help'.\n", stderr);
  return CLI_EUSAGE;
}

int cli_exit_for(embd_result r) {
  if (r == EMBD_ERR_OUT_OF_MEMORY || r == EMBD_ERR_INVALID_ARGUMENT ||
      r == EMBD_ERR_FRAME_DEFLATE || r == EMBD_ERR_UNAVAILABLE)
    return CLI_EINTERNAL;
  return CLI_EDATA;
}

int cli_parse_u64(const char *s, uint64_t max, uint64_t *out) {
  if (!s || *s < '0' || *s > '9') return -1;
  errno = 0;
  char *e;
  const unsigned long long v = strtoull(s, &e, 10);
  if (errno || *e || v > max) return -1;
  *out = v;
  return 0;
}

int cli_parse_dims(const char *s, const char *opt, uint32_t *out) {
  uint64_t v;
  if (cli_parse_u64(s, UINT32_MAX, &v) || v == 0)
    return cli_usage("%s: '%s' is not a number in 1..4294967295", opt, cli_esc(s));
  *out = (uint32_t)v;
  return 0;
}

int cli_frame_opt(int c, const char *arg, embd_frame_encode_options *enc) {
  uint64_t l;
  switch (c) {
    case 'z': enc->flags |= EMBD_FRAME_ZLIB; return 1;
    case 'c': enc->flags |= EMBD_FRAME_PAYLOAD_CRC; return 1;
    case 'l':
      if (cli_parse_u64(arg, 9, &l) || l < 1) return cli_usage("--level: '%s' is not 1..9", cli_esc(arg));
      enc->level = (int)l;
      enc->flags |= EMBD_FRAME_ZLIB;
      return 1;
    default: return 0;
  }
}

int cli_read_opt(int c, const char *arg, cli_read_opts *r) {
  switch (c) {
    case 's': r->stream = 1; return 1;
    case 'd': return cli_parse_dims(arg, "--dims", &r->dims) ? CLI_EUSAGE : 1;
    case 'm': return cli_parse_dims(arg, "--max-dims", &r->max_dims) ? CLI_EUSAGE : 1;
    default: return 0;
  }
}

int cli_parse_max_record(const char *arg, uint64_t *out) {
  if (cli_parse_size(arg, out))
    return cli_usage("--max-record: '%s' is not a byte count (N, NK, NM or NG; N >= 1)", cli_esc(arg));
  return 0;
}

int cli_parse_size(const char *s, uint64_t *out) {
  if (!s || *s < '0' || *s > '9') return -1;
  errno = 0;
  char *e;
  unsigned long long v = strtoull(s, &e, 10);
  if (errno) return -1;
  unsigned shift = 0;
  if (*e == 'K' || *e == 'k') shift = 10, e++;
  else if (*e == 'M' || *e == 'm') shift = 20, e++;
  else if (*e == 'G' || *e == 'g') shift = 30, e++;
  if (*e || v == 0 || v > (UINT64_MAX >> shift)) return -1;
  *out = (uint64_t)v << shift;
  return 0;
}

/* ---- names in messages ------------------------------------------------------------------ */

/* Allocates the escaped copy of s; NULL when out of memory. */
static char *escape_dup(const char *s) {
  const size_t n = strlen(s), need = cli_escape(NULL, 0, s, n) + 1;
  char *d = malloc(need);
  if (d) cli_escape(d, need, s, n);
  return d;
}

/* ---- input ----------------------------------------------------------------------------- */

const char *cli_in_label(const cli_in *in) {
  if (!strcmp(in->name, "-")) return "<stdin>";
  return in->label ? in->label : "(name not shown: out of memory)";
}

int cli_in_open(cli_in *in, const char *path) {
  memset(in, 0, sizeof *in);
  in->name = path;
  in->fd = -1;
  if (strcmp(path, "-") && !(in->label = escape_dup(path))) {
    cli_msg("out of memory");
    return CLI_EINTERNAL;
  }
  if (!strcmp(path, "-")) {
    in->fd = 0;
  } else {
    in->fd = open(path, O_RDONLY);
    if (in->fd < 0) {
      cli_msg("%s: cannot open: %s", cli_in_label(in), strerror(errno));
      cli_in_close(in);
      return CLI_EIO;
    }
  }
  struct stat st;
  if (fstat(in->fd, &st) == 0) {
    if (S_ISDIR(st.st_mode)) {
      cli_msg("%s: is a directory", cli_in_label(in));
      cli_in_close(in);
      return CLI_EIO;
    }
    if (S_ISREG(st.st_mode)) {
      in->regular = 1;
      in->size = (uint64_t)st.st_size;
      in->dev = (uint64_t)st.st_dev;
      in->ino = (uint64_t)st.st_ino;
    }
  }
  return CLI_OK;
}

void cli_in_close(cli_in *in) {
  if (in->fd > 0) close(in->fd);
  in->fd = -1;
  free(in->label);
  in->label = NULL;
}

static int raw_read(cli_in *in, void *dst, size_t n, size_t *got, uint64_t at) {
  size_t done = 0;
  while (done < n) {
    const size_t want = n - done > (1u << 30) ? (1u << 30) : n - done;
    const ssize_t r = read(in->fd, (char *)dst + done, want);
    if (r < 0) {
      if (errno == EINTR) continue;
      cli_msg("%s: read error at byte %llu: %s", cli_in_label(in),
              (unsigned long long)(at + done), strerror(errno));
      return CLI_EIO;
    }
    if (r == 0) break;
    done += (size_t)r;
  }
  *got = done;
  return CLI_OK;
}

int cli_in_peek(cli_in *in, size_t n, const uint8_t **p, size_t *got) {
  if (n > sizeof in->peek) n = sizeof in->peek;
  if (in->peek_pos) { /* compact */
    memmove(in->peek, in->peek + in->peek_pos, in->peek_len - in->peek_pos);
    in->peek_len -= in->peek_pos;
    in->peek_pos = 0;
  }
  if (in->peek_len < n) {
    size_t g;
    const int rc = raw_read(in, in->peek + in->peek_len, n - in->peek_len, &g,
                            in->pos + in->peek_len);
    if (rc) return rc;
    in->peek_len += g;
  }
  *p = in->peek;
  *got = in->peek_len < n ? in->peek_len : n;
  return CLI_OK;
}

int cli_in_read(cli_in *in, void *dst, size_t n, size_t *got) {
  size_t done = 0;
  if (in->peek_pos < in->peek_len && n) {
    size_t k = in->peek_len - in->peek_pos;
    if (k > n) k = n;
    memcpy(dst, in->peek + in->peek_pos, k);
    in->peek_pos += k;
    done = k;
    if (in->peek_pos == in->peek_len) in->peek_pos = in->peek_len = 0;
  }
  size_t g = 0;
  const int rc = raw_read(in, (char *)dst + done, n - done, &g, in->pos + done);
  if (rc) return rc;
  done += g;
  in->pos += done;
  *got = done;
  return CLI_OK;
}

int cli_in_read_all(cli_in *in, char **data, size_t *len, uint64_t max, const char *opt) {
  if (max > SIZE_MAX / 4) max = SIZE_MAX / 4;
  /* a regular file: its size at once (one more byte to see the end); else grow by doubling */
  uint64_t guess = in->regular && in->size >= in->pos ? in->size - in->pos + 2 : 1 << 16;
  if (guess > max + 2) guess = max + 2;
  size_t cap = guess < 4096 ? 4096 : (size_t)guess;
  size_t n = 0;
  char *buf = embd_realloc_big(NULL, 0, cap);
  if (!buf) {
    cli_msg("%s: out of memory reading the input", cli_in_label(in));
    return CLI_EINTERNAL;
  }
  for (;;) {
    if (cap - n < 2) {
      char *nb = embd_realloc_big(buf, n, cap * 2);
      if (!nb) {
        free(buf);
        cli_msg("%s: out of memory reading the input (%zu bytes so far)", cli_in_label(in), n);
        return CLI_EINTERNAL;
      }
      buf = nb;
      cap *= 2;
    }
    /* never more than max + 1 bytes: one past the bound tells that it is exceeded */
    size_t want = cap - 1 - n;
    if (want > max + 1 - n) want = (size_t)(max + 1 - n);
    size_t got;
    const int rc = cli_in_read(in, buf + n, want, &got);
    if (rc) {
      free(buf);
      return rc;
    }
    n += got;
    if (n > max) {
      free(buf);
      if (opt)
        cli_msg("%s: more than %llu bytes: larger than %s allows (raise it with %s BYTES)",
                cli_in_label(in), (unsigned long long)max, opt, opt);
      else
        cli_msg("%s: more than %llu bytes: too large", cli_in_label(in), (unsigned long long)max);
      return CLI_EDATA;
    }
    if (got < want) break; /* short read: end of input */
  }
  buf[n] = 0;
  *data = buf;
  *len = n;
  return CLI_OK;
}

int cli_in_read_json_object(cli_in *in, char **data, size_t *len, uint64_t max) {
  /* Judge the start at once: `embd openai /dev/zero` must not read until memory runs out.
   * Leading white space longer than the peek window is read on, up to max. */
  const uint8_t *p;
  size_t got;
  int rc = cli_in_peek(in, sizeof in->peek, &p, &got);
  if (rc) return rc;
  size_t i = got >= 3 && !memcmp(p, "\xef\xbb\xbf", 3) ? 3 : 0;
  while (i < got && (p[i] == ' ' || p[i] == '\t' || p[i] == '\n' || p[i] == '\r')) i++;
  if (i < got && p[i] != '{') {
    char shown[8];
    cli_escape(shown, sizeof shown, p + i, 1);
    cli_msg("%s: byte %zu: expected '{' (a response is one JSON object), found '%s'",
            cli_in_label(in), i, shown);
    return CLI_EDATA;
  }
  return cli_in_read_all(in, data, len, max, "--max-record");
}

int cli_in_load_json_object(cli_in *in, const char **data, size_t *len, uint64_t max) {
#ifdef MAP_POPULATE
  /* A named regular file of some size is mapped, its pages all at once (MAP_POPULATE):
   * reading 165 MB into fresh memory costs ~40,000 first-touch faults (~250 ms on these
   * VMs, ten times the decode); the page cache's pages mapped in one call, ~18 ms. Only
   * when nothing was consumed yet (the peek reads ahead without consuming). */
  const uint8_t *p;
  size_t got;
  if (in->fd > 0 && in->regular && in->pos == 0 && in->size >= CLI_MAP_MIN && in->size <= max &&
      in->size <= SIZE_MAX && cli_in_peek(in, 1, &p, &got) == CLI_OK && got && *p != 0xef) {
    /* judged as cli_in_read_json_object does (a BOM or white space first: read below) */
    size_t i = 0;
    while (i < in->peek_len && (in->peek[i] == ' ' || in->peek[i] == '\t' || in->peek[i] == '\n' ||
                                in->peek[i] == '\r'))
      i++;
    if (i < in->peek_len && in->peek[i] == '{') {
      void *m = mmap(NULL, (size_t)in->size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, in->fd, 0);
      if (m != MAP_FAILED) {
        in->map = m;
        in->map_len = (size_t)in->size;
        in->pos = in->size;
        in->peek_len = in->peek_pos = 0;
        *data = m;
        *len = (size_t)in->size;
        return CLI_OK;
      }
    }
  }
#endif
  char *d = NULL;
  const int rc = cli_in_read_json_object(in, &d, len, max);
  *data = d;
  return rc;
}

void cli_in_release(cli_in *in, const char *data) {
  if (!data) return;
#ifdef MAP_POPULATE
  if (in->map && data == (const char *)in->map) {
    munmap(in->map, in->map_len);
    in->map = NULL;
    return;
  }
#endif
  free((char *)data);
}

/* ---- output ---------------------------------------------------------------------------- */

const char *cli_out_label(const cli_out *o) {
  if (!o->name || !strcmp(o->name, "-")) return "<stdout>";
  return o->label ? o->label : "(name not shown: out of memory)";
}

int cli_out_check_input(const char *output, const cli_in *in) {
  if (!in->regular) return CLI_OK;
  const int to_stdout = !output || !strcmp(output, "-");
  struct stat st;
  if (to_stdout ? fstat(1, &st) != 0 : stat(output, &st) != 0) return CLI_OK; /* a new file */
  if (!S_ISREG(st.st_mode) || (uint64_t)st.st_dev != in->dev || (uint64_t)st.st_ino != in->ino)
    return CLI_OK;
  if (to_stdout)
    return cli_usage("%s: standard output is the input file: writing would destroy it",
                     cli_in_label(in));
  return cli_usage("%s: the output %s is the input file: writing would destroy it",
                   cli_in_label(in), cli_esc(output));
}

/* The temporary file of the open CLI_OUT_TEMP output, for the signal handler: it removes
 * the file and dies of the signal as it would have. Set before the handlers go in and
 * cleared (with the signals blocked) when the file is renamed or removed. */
static char *volatile g_temp_path;
static const int g_signals[] = {SIGINT, SIGTERM, SIGHUP};
#define NSIG_HANDLED (sizeof g_signals / sizeof g_signals[0])
static struct sigaction g_old_action[NSIG_HANDLED];
static int g_handled[NSIG_HANDLED];

static void on_fatal_signal(int sig) {
  char *p = g_temp_path;
  if (p) unlink(p); /* async-signal-safe */
  /* SA_RESETHAND restored the default action; the signal is blocked in here and
   * delivered again on return: the exit status says which signal ended the run */
  raise(sig);
}

static void temp_guard_on(char *path) {
  g_temp_path = path;
  for (size_t i = 0; i < NSIG_HANDLED; i++) {
    g_handled[i] = 0;
    struct sigaction old;
    /* a signal ignored on entry stays ignored (nohup, `cmd &` in a script) */
    if (sigaction(g_signals[i], NULL, &old) || old.sa_handler == SIG_IGN) continue;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_fatal_signal;
    sa.sa_flags = SA_RESETHAND;
    sigemptyset(&sa.sa_mask);
    if (sigaction(g_signals[i], &sa, &g_old_action[i]) == 0) g_handled[i] = 1;
  }
}

/* Blocks the handled signals (the caller then renames or unlinks the temporary file and
 * calls temp_guard_off); *old receives the previous mask. */
static void temp_guard_block(sigset_t *old) {
  sigset_t set;
  sigemptyset(&set);
  for (size_t i = 0; i < NSIG_HANDLED; i++) sigaddset(&set, g_signals[i]);
  sigprocmask(SIG_BLOCK, &set, old);
}

static void temp_guard_off(const sigset_t *old) {
  g_temp_path = NULL;
  for (size_t i = 0; i < NSIG_HANDLED; i++)
    if (g_handled[i]) sigaction(g_signals[i], &g_old_action[i], NULL);
  sigprocmask(SIG_SETMASK, old, NULL); /* a signal that came meanwhile acts now */
}

/* A new file in the directory of `target` to be renamed over it: .NAME.XXXXXX, mode of
 * the file it replaces (st, if it exists) or 0666 less the umask. Returns the FILE or NULL
 * (printed). */
static FILE *open_temp(cli_out *o, const char *target, const struct stat *st) {
  const char *slash = strrchr(target, '/');
  const size_t dlen = slash ? (size_t)(slash - target) + 1 : 0;
  const char *base = target + dlen;
  if (!*base) {
    cli_msg("%s: cannot open for writing: %s", cli_out_label(o), strerror(EISDIR));
    return NULL;
  }
  const size_t need = dlen + 1 + strlen(base) + 8;
  char *tmp = malloc(need);
  if (!tmp) {
    cli_msg("out of memory");
    return NULL;
  }
  snprintf(tmp, need, "%.*s.%s.XXXXXX", (int)dlen, target, base);
  sigset_t old;
  temp_guard_block(&old); /* no signal between creating the file and arming the handler */
  const int fd = mkstemp(tmp);
  const int err = errno;
  if (fd >= 0) temp_guard_on(tmp);
  sigprocmask(SIG_SETMASK, &old, NULL);
  if (fd < 0) {
    cli_msg("%s: cannot open for writing: cannot create the temporary file %s: %s",
            cli_out_label(o), cli_esc(tmp), strerror(err));
    free(tmp);
    return NULL;
  }
  mode_t mode;
  if (st) {
    mode = st->st_mode & 07777;
    /* as root, the replacement keeps the owner too (best effort: else it is ours) */
    if ((st->st_uid != geteuid() || st->st_gid != getegid()) && fchown(fd, st->st_uid, st->st_gid)) {
    }
  } else {
    const mode_t um = umask(0);
    umask(um);
    mode = 0666 & ~um;
  }
  if (fchmod(fd, mode)) { /* mkstemp's 0600 stays: safe, only stricter */
  }
  FILE *f = fdopen(fd, "wb");
  if (!f) {
    cli_msg("%s: cannot open for writing: %s", cli_out_label(o), strerror(errno));
    close(fd);
    temp_guard_block(&old);
    unlink(tmp);
    temp_guard_off(&old);
    free(tmp);
    return NULL;
  }
  o->temp_path = tmp;
  return f;
}

int cli_out_open(cli_out *o, const char *path, int binary) {
  memset(o, 0, sizeof *o);
  o->name = path ? path : "-";
  if (!strcmp(o->name, "-")) {
    if (binary && isatty(1)) {
      cli_msg("refusing to write binary data to a terminal: use -o FILE or redirect stdout");
      return CLI_EUSAGE;
    }
    o->f = stdout;
    o->kind = CLI_OUT_STDOUT;
    struct stat st;
    if (fstat(1, &st) == 0 && S_ISREG(st.st_mode)) {
      /* where to cut back to on failure: the end the file had (past the offset only with
       * `1<>FILE`; bytes we overwrite inside it cannot be given back anyway) */
      const off_t at = lseek(1, 0, SEEK_CUR);
      o->cut_on_fail = 1;
      o->cut_at = at > st.st_size ? (int64_t)at : (int64_t)st.st_size;
    }
  } else {
    if (!(o->label = escape_dup(o->name))) {
      cli_msg("out of memory");
      return CLI_EINTERNAL;
    }
    struct stat st;
    const int exists = stat(o->name, &st) == 0; /* through a symlink: its target */
    if (!exists && errno != ENOENT) {
      cli_msg("%s: cannot open for writing: %s", cli_out_label(o), strerror(errno));
      goto fail;
    }
    struct stat lst;
    if (!exists && lstat(o->name, &lst) == 0 && S_ISLNK(lst.st_mode)) {
      /* creating the target of a dangling link would make a file in an unexpected place */
      cli_msg("%s: cannot open for writing: a symbolic link to a file that does not exist",
              cli_out_label(o));
      goto fail;
    }
    if (exists && S_ISDIR(st.st_mode)) {
      cli_msg("%s: cannot open for writing: %s", cli_out_label(o), strerror(EISDIR));
      goto fail;
    }
    if (exists && !S_ISREG(st.st_mode)) {
      /* a device, FIFO, socket: written in place; O_TRUNC would do nothing, and removing
       * it on failure would destroy what the command did not make */
      const int fd = open(o->name, O_WRONLY | O_NOCTTY);
      if (fd < 0 || !(o->f = fdopen(fd, "wb"))) {
        cli_msg("%s: cannot open for writing: %s", cli_out_label(o), strerror(errno));
        if (fd >= 0) close(fd);
        goto fail;
      }
      o->kind = CLI_OUT_DIRECT;
    } else {
      if (exists && access(o->name, W_OK) != 0) { /* as fopen would: a read-only file stays */
        cli_msg("%s: cannot open for writing: %s", cli_out_label(o), strerror(errno));
        goto fail;
      }
      /* a symlink: replace its target (the link stays a link), in the target's directory */
      char *target = exists && lstat(o->name, &lst) == 0 && S_ISLNK(lst.st_mode)
                         ? realpath(o->name, NULL)
                         : strdup(o->name);
      if (!target) {
        cli_msg("%s: cannot open for writing: %s", cli_out_label(o), strerror(errno));
        goto fail;
      }
      o->final_path = target;
      if (!(o->f = open_temp(o, target, exists ? &st : NULL))) goto fail;
      o->kind = CLI_OUT_TEMP;
    }
  }
  /* glibc's setvbuf ignores the size when it allocates the buffer itself (st_blksize:
   * 4 KiB, a write call per 4 KiB: 30,000 calls for a 123 MB .npy); give it one */
  if (o->kind == CLI_OUT_STDOUT) {
    /* stdout outlives the cli_out: a buffer that stays, set once (before its first use) */
    static char stdout_buf[CLI_OUT_BUFFER];
    static int stdout_buffered;
    if (!stdout_buffered) setvbuf(o->f, stdout_buf, _IOFBF, sizeof stdout_buf);
    stdout_buffered = 1;
  } else if ((o->vbuf = malloc(CLI_OUT_BUFFER))) {
    setvbuf(o->f, o->vbuf, _IOFBF, CLI_OUT_BUFFER);
  }
  return CLI_OK;
fail:
  free(o->label);
  free(o->final_path);
  o->label = o->final_path = NULL;
  return CLI_EIO;
}

int cli_out_write(cli_out *o, const void *p, size_t n) {
  if (o->failed) return CLI_EIO;
  if (n && fwrite(p, 1, n, o->f) != n) {
    o->failed = 1;
    cli_msg("%s: write error: %s", cli_out_label(o), strerror(errno));
    return CLI_EIO;
  }
  return CLI_OK;
}

int cli_out_can_take_back(const cli_out *o) {
  return o->kind == CLI_OUT_TEMP || (o->kind == CLI_OUT_STDOUT && o->cut_on_fail);
}

int cli_out_seekable(const cli_out *o) {
  struct stat st;
  const int fl = fcntl(fileno(o->f), F_GETFL);
  return fstat(fileno(o->f), &st) == 0 && S_ISREG(st.st_mode) && fl >= 0 && !(fl & O_APPEND) &&
         ftello(o->f) >= 0;
}

int cli_out_close(cli_out *o, int ok) {
  if (!o->f) return CLI_OK;
  int rc = CLI_OK;
  if (fflush(o->f) != 0 || ferror(o->f)) {
    if (!o->failed) cli_msg("%s: write error: %s", cli_out_label(o), strerror(errno));
    o->failed = 1;
    rc = CLI_EIO;
  }
  if (o->kind == CLI_OUT_STDOUT) {
    if ((!ok || rc) && o->cut_on_fail) {
      struct stat st;
      if (fstat(1, &st) == 0 && st.st_size > o->cut_at &&
          ftruncate(1, (off_t)o->cut_at)) { /* best effort: the exit code tells */
      }
    }
  } else {
    if (fclose(o->f) != 0 && !o->failed) {
      cli_msg("%s: write error: %s", cli_out_label(o), strerror(errno));
      o->failed = 1;
      rc = CLI_EIO;
    }
    if (o->kind == CLI_OUT_TEMP) {
      /* No fsync: the command's output is no more durable than any other write; rename
       * only makes sure FILE is either the old file or the whole new one. */
      sigset_t old;
      temp_guard_block(&old);
      if (ok && !rc && rename(o->temp_path, o->final_path) != 0) {
        cli_msg("%s: cannot rename %s into place: %s", cli_out_label(o), cli_esc(o->temp_path),
                strerror(errno));
        rc = CLI_EIO;
      }
      if (!ok || rc) unlink(o->temp_path);
      temp_guard_off(&old);
    }
  }
  free(o->temp_path);
  free(o->final_path);
  free(o->label);
  free(o->vbuf); /* after fclose: the stream used it to the end */
  o->vbuf = NULL;
  o->temp_path = o->final_path = o->label = NULL;
  o->f = NULL;
  return rc;
}

int cli_flush_stdout(void) {
  errno = 0;
  const int bad = fflush(stdout) != 0;
  const int err = errno;
  if (bad || ferror(stdout)) {
    /* a failed buffer flush earlier leaves ferror set: its errno is gone by now, unless
     * the final flush failed the same way */
    cli_msg("<stdout>: write error%s%s", err ? ": " : "", err ? strerror(err) : "");
    clearerr(stdout);
    return CLI_EIO;
  }
  return CLI_OK;
}

/* ---- progress ---------------------------------------------------------------------------- */

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

void cli_progress_start(cli_progress *p, uint64_t total) {
  memset(p, 0, sizeof *p);
  p->total = total;
  p->tty = isatty(2) && !getenv("EMBD_NO_PROGRESS");
  p->start = now_s();
}

void cli_progress_update(cli_progress *p, uint64_t done) {
  if (!p->tty) return;
  const double t = now_s();
  if (t - p->start < 1.0 || t - p->last < 0.1) return;
  p->last = t;
  p->shown = 1;
  const double mib = (double)done / 1048576.0, rate = mib / (t - p->start);
  if (p->total) {
    const double f = done >= p->total ? 1.0 : (double)done / (double)p->total;
    char bar[31];
    const int fill = (int)(f * 30);
    for (int i = 0; i < 30; i++) bar[i] = i < fill ? '#' : '-';
    bar[30] = 0;
    fprintf(stderr, "\rembd %s [%s] %5.1f%% %.1f/%.1f MiB %.0f MiB/s ", cli_cmd, bar, f * 100,
            mib, (double)p->total / 1048576.0, rate);
  } else {
    fprintf(stderr, "\rembd %s: %.1f MiB %.0f MiB/s ", cli_cmd, mib, rate);
  }
}

void cli_progress_end(cli_progress *p) {
  if (p->shown) fputs("\r\033[K", stderr);
  p->shown = 0;
}

/* ---- floats ---------------------------------------------------------------------------- */
/* A float32 prints in at most 15 bytes with "%.9g": GCC cannot know that. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wformat-truncation"
#endif

int cli_fmt_f32(char *buf, float v) {
  /* round-trip holds for every precision from the shortest one up to 9: binary search */
  int lo = 1, hi = 9, n = 0;
  while (lo < hi) {
    const int mid = (lo + hi) / 2;
    snprintf(buf, 32, "%.*g", mid, (double)v);
    const float b = strtof(buf, NULL);
    if (memcmp(&b, &v, sizeof v) == 0) hi = mid;
    else lo = mid + 1;
  }
  n = snprintf(buf, 32, "%.*g", lo, (double)v);
  if (memchr(buf, 'e', (size_t)n)) { /* "1e+02": a longer precision may be shorter text ("100") */
    char alt[32];
    for (int p = lo + 1; p <= 9; p++) {
      const int m = snprintf(alt, sizeof alt, "%.*g", p, (double)v);
      if (m < n) {
        memcpy(buf, alt, (size_t)m + 1);
        n = m;
      }
    }
  }
  return n;
}

/* ---- option values ---------------------------------------------------------------------- */

int cli_parse_dtype(const char *s, const char *opt, embd_dtype *out) {
  if (embd_dtype_parse(s, strlen(s), out) == EMBD_OK) return 0;
  return cli_usage("%s: '%s' is not a dtype (f32, f16, bf16, fp8-e4m3, fp8-e5m2, int8, uint8, "
                   "binary, ubinary)", opt, cli_esc(s));
}
