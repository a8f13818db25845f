/* embd inspect: each frame's header fields, then a summary. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"

/* ==== inspect =========================================================================== */

typedef struct breader {
  cli_in *in;
  uint8_t *buf;
  size_t cap, pos, end;
  uint64_t base; /* absolute offset of buf[0] */
  int eof;
} breader;

/* Makes n bytes available at buf + pos (fewer at the end of the input). */
static int br_need(breader *b, size_t n, size_t *avail) {
  if (b->end - b->pos < n && !b->eof) {
    if (b->pos) {
      memmove(b->buf, b->buf + b->pos, b->end - b->pos);
      b->end -= b->pos;
      b->base += b->pos;
      b->pos = 0;
    }
    const size_t want = n > CLI_CHUNK ? n : CLI_CHUNK;
    if (b->cap < want) {
      uint8_t *nb = realloc(b->buf, want);
      if (!nb) {
        cli_msg("out of memory");
        return CLI_EINTERNAL;
      }
      b->buf = nb;
      b->cap = want;
    }
    while (b->end < n && !b->eof) {
      size_t got;
      const int rc = cli_in_read(b->in, b->buf + b->end, b->cap - b->end, &got);
      if (rc) return rc;
      if (got < b->cap - b->end) b->eof = 1;
      b->end += got;
    }
  }
  *avail = b->end - b->pos < n ? b->end - b->pos : n;
  return CLI_OK;
}

static const char inspect_help[] =
    "Usage: embd inspect [options] [INPUT]\n"
    "Prints each frame's header fields: its byte offset, magic, version, flags, dims, dtype\n"
    "(version 1: f32; version 2: byte 6's code), the header CRC stored and computed, the\n"
    "payload CRC (when the frame has one), the compressed length (zlib frames) and the\n"
    "frame's size; then a summary (frames, bytes, a histogram of dims, of flags and of\n"
    "dtypes). Stops at the first invalid frame: prints what it\n"
    "could read of it, the error with frame number (from 0) and byte offset, exit 1.\n"
    "INPUT defaults to - (stdin).\n"
    "\n"
    "Options:\n"
    "  -s, --stream       the input is frames back to back, without the batch count\n"
    "  -S, --summary      print only the summary\n"
    "  -m, --max-dims N   reject frames above N dims (default 1048576)\n"
    "  -h, --help         show this help\n"
    "\n"
    "Example:\n"
    "  embd inspect vectors.embd\n"
    "  frame 0 at byte 4: magic ok, version 1, flags 0x02 (payload-crc), dims 3, dtype f32,\n"
    "    header crc 0x1c291ca3 (computed 0x1c291ca3) ok, payload crc 0x... ok, size 32\n";

#define HIST_MAX 16
typedef struct hist {
  uint32_t key[HIST_MAX];
  uint64_t n[HIST_MAX];
  int len;
  uint64_t other;
} hist;

static void hist_add(hist *h, uint32_t k) {
  for (int i = 0; i < h->len; i++)
    if (h->key[i] == k) {
      h->n[i]++;
      return;
    }
  if (h->len == HIST_MAX) {
    h->other++;
    return;
  }
  h->key[h->len] = k;
  h->n[h->len++] = 1;
}

static const char *flag_names(unsigned f, char *buf, size_t cap) {
  if (!f) return "none";
  snprintf(buf, cap, "%s%s%s%s", f & 1 ? "zlib" : "", (f & 1) && (f & 2) ? "," : "",
           f & 2 ? "payload-crc" : "", f & ~3u ? (f & 3 ? ",unknown" : "unknown") : "");
  return buf;
}

/* The dtype a header names: f32 for version 1, byte 6 for version 2 ("code N" for an
 * unknown one, which the frame check then reports). */
static const char *dtype_of(const uint8_t *h, char *buf, size_t cap) {
  if (h[4] != EMBD_FRAME_VERSION_DTYPE) return "f32";
  const char *n = embd_dtype_name((embd_dtype)h[6]);
  if (n) return n;
  snprintf(buf, cap, "unknown code %u", h[6]);
  return buf;
}

static void print_summary(uint64_t frames, uint64_t bytes, int batch, uint32_t count,
                          const hist *dh, const hist *fh, const hist *th) {
  printf("summary: %llu frames, %llu bytes", (unsigned long long)frames, (unsigned long long)bytes);
  if (batch) printf(" (batch count %lu)", (unsigned long)count);
  printf("\n  dims:");
  if (!dh->len) printf(" -");
  for (int i = 0; i < dh->len; i++)
    printf("%s %lu x%llu", i ? "," : "", (unsigned long)dh->key[i], (unsigned long long)dh->n[i]);
  if (dh->other) printf(", other x%llu", (unsigned long long)dh->other);
  printf("\n  flags:");
  if (!fh->len) printf(" -");
  char fb[48];
  for (int i = 0; i < fh->len; i++)
    printf("%s %s x%llu", i ? "," : "", flag_names(fh->key[i], fb, sizeof fb),
           (unsigned long long)fh->n[i]);
  printf("\n  dtypes:");
  if (!th->len) printf(" -");
  for (int i = 0; i < th->len; i++)
    printf("%s %s x%llu", i ? "," : "", embd_dtype_name((embd_dtype)th->key[i]),
           (unsigned long long)th->n[i]);
  printf("\n");
}

int cmd_inspect(int argc, char **argv) {
  static const struct option opts[] = {{"stream", no_argument, 0, 's'},
                                       {"summary", no_argument, 0, 'S'},
                                       {"max-dims", required_argument, 0, 'm'},
                                       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
  int stream = 0, summary_only = 0;
  uint32_t max_dims = CLI_DEFAULT_MAX_DIMS;
  int c;
  while ((c = getopt_long(argc, argv, "sSm:h", opts, NULL)) != -1) {
    switch (c) {
      case 's': stream = 1; break;
      case 'S': summary_only = 1; break;
      case 'm':
        if (cli_parse_dims(optarg, "--max-dims", &max_dims)) return CLI_EUSAGE;
        break;
      case 'h': fputs(inspect_help, stdout); return CLI_OK;
      default: return cli_usage("unknown or incomplete option");
    }
  }
  if (argc - optind > 1) return cli_usage("one INPUT at most (got %d)", argc - optind);
  cli_in in;
  int rc = cli_in_open(&in, optind < argc ? argv[optind] : "-");
  if (rc) return rc;
  const char *label = cli_in_label(&in);
  breader b = {&in, NULL, 0, 0, 0, 0, 0};
  size_t max_frame;
  if (embd_stream_buffer_size(max_dims, &max_frame)) {
    cli_msg("--max-dims %lu: too large", (unsigned long)max_dims);
    return CLI_EUSAGE;
  }
  float *vals = NULL;
  size_t vcap = 0;
  hist dh = {{0}, {0}, 0, 0}, fh = {{0}, {0}, 0, 0}, th = {{0}, {0}, 0, 0};
  uint64_t frames = 0;
  uint32_t count = 0;
  size_t av;
  char fb[48], tb[32];
  cli_progress pr;
  cli_progress_start(&pr, in.regular ? in.size : 0);
  const embd_frame_decode_options o = {.max_dims = max_dims, .expected_dims = 0, .allow_trailing = 1};
  if (!stream) {
    if ((rc = br_need(&b, 4, &av))) goto out;
    if (av < 4) {
      cli_msg("%s: batch count: %zu of its 4 bytes (at byte 0)%s", label, av,
              av == 0 ? ": the input is empty" : "");
      rc = CLI_EDATA;
      goto out;
    }
    count = cli_rd32le(b.buf);
    if (!memcmp(b.buf, "EMBD", 4))
      cli_msg("warning: %s starts with an EMBD frame, not a batch count: is it a frame stream? try --stream",
              label);
    if (!summary_only) printf("batch count %lu at byte 0\n", (unsigned long)count);
    b.pos += 4;
  }
  for (uint32_t idx = 0;; idx++) {
    const uint64_t off = b.base + b.pos;
    if (!stream && idx == count) {
      if ((rc = br_need(&b, 1, &av))) goto out;
      if (av) {
        cli_msg("%s: bytes after the last of the %lu frames, from byte %llu", label,
                (unsigned long)count, (unsigned long long)off);
        rc = CLI_EDATA;
      }
      break;
    }
    if ((rc = br_need(&b, 20, &av))) goto out;
    if (av == 0 && stream) break;
    const uint8_t *h = b.buf + b.pos;
    embd_frame_info info;
    embd_error e;
    if (av < 16) {
      if (!summary_only) printf("frame %lu at byte %llu: %zu bytes, truncated\n", (unsigned long)idx, (unsigned long long)off, av);
      cli_msg("%s: frame %lu at byte %llu: truncated: %zu of the 16 header bytes%s", label,
              (unsigned long)idx, (unsigned long long)(off + av), av,
              !stream ? " (fewer frames than the batch count says)" : "");
      rc = CLI_EDATA;
      break;
    }
    const unsigned flags = h[5];
    const uint32_t dims = cli_rd32le(h + 8), stored = cli_rd32le(h + 12);
    const uint32_t computed = embd_crc32(0, h, 12);
    const int magic_ok = !memcmp(h, "EMBD", 4);
    if (!summary_only) {
      printf("frame %lu at byte %llu: magic %s, version %u, flags 0x%02x (%s), dims %lu, dtype %s,\n"
             "  header crc 0x%08lx (computed 0x%08lx) %s",
             (unsigned long)idx, (unsigned long long)off, magic_ok ? "ok" : "BAD", h[4], flags,
             flag_names(flags, fb, sizeof fb), (unsigned long)dims, dtype_of(h, tb, sizeof tb),
             (unsigned long)stored, (unsigned long)computed, stored == computed ? "ok" : "MISMATCH");
    }
    /* The library says how big the frame is (and checks its header): no second copy of
     * the format's size rules here. */
    uint64_t need = 0;
    embd_result r = embd_frame_need(h, av, &o, &need, &e);
    size_t fsize = 0;
    if (r == EMBD_OK) {
      const int z = flags & EMBD_FRAME_ZLIB, tr = flags & EMBD_FRAME_PAYLOAD_CRC ? 4 : 0;
      if (z && av >= 20 && !summary_only)
        printf(", compressed %lu bytes", (unsigned long)cli_rd32le(h + 16));
      fsize = need > SIZE_MAX ? SIZE_MAX : (size_t)need; /* 20 for a zlib frame cut in its length field */
      if (fsize > max_frame) {
        if (!summary_only) printf("\n");
        cli_msg("%s: frame %lu at byte %llu: %zu bytes, more than --max-dims %lu allows", label,
                (unsigned long)idx, (unsigned long long)off, fsize, (unsigned long)max_dims);
        rc = CLI_EDATA;
        break;
      }
      if (fsize) {
        if ((rc = br_need(&b, fsize, &av))) goto out;
        h = b.buf + b.pos;
        if (vcap < (size_t)dims + 1) {
          float *nv = realloc(vals, ((size_t)dims + 1) * sizeof *nv);
          if (!nv) {
            cli_msg("out of memory");
            rc = CLI_EINTERNAL;
            goto out;
          }
          vals = nv;
          vcap = (size_t)dims + 1;
        }
        if (tr && av == fsize && !summary_only) {
          const uint32_t ps = cli_rd32le(h + fsize - 4), pc = embd_crc32(0, h + 16, fsize - 20);
          printf(", payload crc 0x%08lx (computed 0x%08lx) %s", (unsigned long)ps,
                 (unsigned long)pc, ps == pc ? "ok" : "MISMATCH");
        }
        r = embd_frame_decode(h, av, &o, vals, vcap, &info, &e);
      }
    }
    if (!summary_only) {
      if (fsize) printf(", size %zu", fsize);
      printf(r ? ": INVALID\n" : "\n");
    }
    if (r) {
      /* the frame's offset, as the batch and stream decoders report it */
      cli_msg("%s: frame %lu at byte %llu: %s", label, (unsigned long)idx,
              (unsigned long long)off, e.message);
      rc = cli_exit_for(r);
      break;
    }
    hist_add(&dh, dims);
    hist_add(&fh, flags);
    hist_add(&th, info.dtype);
    frames++;
    b.pos += fsize;
    cli_progress_update(&pr, b.base + b.pos);
  }
  cli_progress_end(&pr);
  fflush(stderr);
  print_summary(frames, b.base + b.pos, !stream, count, &dh, &fh, &th);
out:
  cli_progress_end(&pr);
  free(b.buf);
  free(vals);
  cli_in_close(&in);
  return rc;
}
