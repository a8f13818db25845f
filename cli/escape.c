/* embd CLI: names in messages, escaped (see escape.h). */
#include "escape.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "embd/codec.h" /* embd_codec_utf8_check */

size_t cli_escape(char *dst, size_t cap, const void *src, size_t n) {
  const uint8_t *s = src;
  size_t w = 0;
#define PUT(c)                            \
  do {                                    \
    if (w + 1 < cap) dst[w] = (char)(c); \
    w++;                                  \
  } while (0)
  for (size_t i = 0; i < n;) {
    const uint8_t c = s[i];
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      PUT(c);
      i++;
      continue;
    }
    size_t len = 1; /* the bytes escaped together: one, or a whole C1 control */
    if (c >= 0x80) {
      const size_t want = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
      if (want && want <= n - i && embd_codec_utf8_check(s + i, want) == 0) {
        /* U+0080..U+009F (C2 80..C2 9F) are C1 controls: 9B is a CSI to some terminals */
        if (!(c == 0xc2 && s[i + 1] < 0xa0)) {
          for (size_t k = 0; k < want; k++) PUT(s[i + k]);
          i += want;
          continue;
        }
        len = 2;
      }
    }
    for (size_t k = 0; k < len; k++) {
      const uint8_t b = s[i + k];
      const char *e = b == '\n' ? "\\n" : b == '\t' ? "\\t" : b == '\r' ? "\\r" : b == '\\' ? "\\\\" : NULL;
      if (e) {
        PUT(e[0]);
        PUT(e[1]);
      } else {
        static const char hex[] = "0123456789abcdef";
        PUT('\\');
        PUT('x');
        PUT(hex[b >> 4]);
        PUT(hex[b & 15]);
      }
    }
    i += len;
  }
#undef PUT
  if (cap) dst[w < cap ? w : cap - 1] = 0;
  return w;
}

const char *cli_esc(const char *s) {
  /* The CLI is single-threaded; 4 buffers let one message hold up to 4 escaped strings.
   * They stay allocated until exit (reachable, so not a leak). */
  static char *ring[4];
  static size_t caps[4];
  static unsigned next;
  const unsigned i = next++ & 3;
  const size_t n = strlen(s), need = cli_escape(NULL, 0, s, n) + 1;
  if (caps[i] < need) {
    char *b = realloc(ring[i], need);
    if (!b) return "(name not shown: out of memory)";
    ring[i] = b;
    caps[i] = need;
  }
  cli_escape(ring[i], caps[i], s, n);
  return ring[i];
}


size_t cli_json_escape(char *o, const char *s, size_t n) {
  static const char hex[] = "0123456789abcdef";
  size_t w = 0;
  for (size_t i = 0; i < n; i++) {
    const unsigned char c = (unsigned char)s[i];
    const char *e = NULL;
    switch (c) {
      case '"': e = "\\\""; break;
      case '\\': e = "\\\\"; break;
      case '\n': e = "\\n"; break;
      case '\r': e = "\\r"; break;
      case '\t': e = "\\t"; break;
      case '\b': e = "\\b"; break;
      case '\f': e = "\\f"; break;
      default: break;
    }
    if (e) {
      if (o) memcpy(o + w, e, 2);
      w += 2;
    } else if (c < 0x20) {
      if (o) {
        memcpy(o + w, "\\u00", 4);
        o[w + 4] = hex[c >> 4];
        o[w + 5] = hex[c & 15];
      }
      w += 6;
    } else {
      if (o) o[w] = (char)c;
      w++;
    }
  }
  return w;
}

size_t cli_copy_text_escape(char *o, const char *s, size_t n) {
  size_t w = 0;
  for (size_t i = 0; i < n; i++) {
    const char c = s[i];
    const char e = c == '\\' ? '\\' : c == '\t' ? 't' : c == '\n' ? 'n' : c == '\r' ? 'r' : 0;
    if (e) {
      if (o) {
        o[w] = '\\';
        o[w + 1] = e;
      }
      w += 2;
    } else {
      if (o) o[w] = c;
      w++;
    }
  }
  return w;
}
