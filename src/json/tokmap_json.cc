// Codec tokenizer maps (schema v0.1 and v2 / v2.1) -> embd_tokmap (embd/tokmap.h).
//
// One loader for both schemas: the walk accepts the fields of either, and which schema the
// map follows is decided afterwards ("tokens": v0.1, "vocab": v2), since fields come in any
// order; a field of the other schema is then refused by name. v2 vocab keys are decoded
// (byte_level, metaspace, <0xHH>) in place once every field is known (docs/TOKMAP.md).
//
// embd's own strict JSON reading (src/json/json_strict.h): the whole text is validated
// first (RFC 8259, UTF-8, depth; the fault's byte in the error), then walked. C++ for the
// field tables and callbacks; -fno-exceptions, hidden visibility. One pass over the
// document collects the fields (they may come in any order); the checks that need several fields (ids against vocab_size, the
// byte-fallback range, duplicates) run after it. Every string the map keeps is copied into
// one arena; an unescaped JSON string plus a NUL never takes more bytes than its quoted
// source, so an arena of len + 2 bytes always suffices.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <type_traits>

#include "embd/codec.h"
#include "fail.h"
#include "json_strict.h"
#include "pin.h"
#include "tokmap_internal.h"

namespace {

int hexval(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

struct ent {
  uint32_t id, off, len, at;  // at: byte offset of the key in the document
};

struct spec {
  uint32_t name_off, name_len, id, at;
};

int cmp_ent(const void *a, const void *b) {
  uint32_t x = static_cast<const ent *>(a)->id, y = static_cast<const ent *>(b)->id;
  return x < y ? -1 : x > y;
}

int cmp_tok(const void *a, const void *b) {
  uint32_t x = static_cast<const embd_tokmap_tok *>(a)->id;
  uint32_t y = static_cast<const embd_tokmap_tok *>(b)->id;
  return x < y ? -1 : x > y;
}

int cmp_u32(const void *a, const void *b) {
  uint32_t x = *static_cast<const uint32_t *>(a), y = *static_cast<const uint32_t *>(b);
  return x < y ? -1 : x > y;
}

template <class T>
bool push(T **p, size_t *n, size_t *cap, const T &v) {
  if (*n == *cap) {
    size_t c = *cap ? *cap * 2 : 64;
    if (c > SIZE_MAX / sizeof(T)) return false;
    T *q = static_cast<T *>(realloc(*p, c * sizeof(T)));
    if (!q) return false;
    *p = q;
    *cap = c;
  }
  (*p)[(*n)++] = v;
  return true;
}

enum field_bit : unsigned {
  F_ID = 1, F_VERSION = 2, F_VOCAB = 4, F_TOKENS = 8, F_SPECIAL = 16, F_FB_START = 32,
  F_FB_END = 64, F_PUBLISHED = 128,
  // schema v2 / v2.1 only
  F_VOCABMAP = 256, F_ENCODER = 512, F_MERGES = 1024, F_PATTERN = 2048, F_PROGRAM = 4096,
  F_TOOL = 8192, F_ZSTD = 16384
};
const unsigned F_V2_ONLY = F_VOCABMAP | F_ENCODER | F_MERGES | F_PATTERN | F_PROGRAM | F_TOOL | F_ZSTD;

struct mrg {
  uint32_t off, len, at;
};

// A string shown in a message: at most 32 bytes (cut at a UTF-8 boundary, "..." if cut),
// control bytes, '"' and '\\' as '?', so the message stays one readable line.
const char *show(const char *s, size_t n, char out[48]) {
  size_t k = n <= 32 ? n : 32;
  if (k < n)
    while (k && (static_cast<unsigned char>(s[k]) & 0xC0) == 0x80) k--;
  for (size_t i = 0; i < k; i++) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    out[i] = (c < 0x20 || c == 0x7F || c == '"' || c == '\\') ? '?' : static_cast<char>(c);
  }
  if (k < n) memcpy(out + k, "...", 4);
  else out[k] = 0;
  return out;
}

// "<0xHH>": the byte HH, else -1.
int byte_token(const char *s, size_t n) {
  if (n != 6 || s[0] != '<' || s[1] != '0' || s[2] != 'x' || s[5] != '>') return -1;
  int h = hexval(s[3]), l = hexval(s[4]);
  return h < 0 || l < 0 ? -1 : h * 16 + l;
}

// GPT-2's byte<->unicode alphabet (the byte_level encoder): bytes 0x21..0x7E, 0xA1..0xAC and
// 0xAE..0xFF are the code points of the same value; the other 68 bytes (0x00..0x20,
// 0x7F..0xA0, 0xAD), in order, are U+0100..U+0143. The byte of code point cp, else -1.
int gpt2_byte(uint32_t cp) {
  if ((cp >= 0x21 && cp <= 0x7E) || (cp >= 0xA1 && cp <= 0xAC) || (cp >= 0xAE && cp <= 0xFF))
    return static_cast<int>(cp);
  if (cp < 0x100 || cp > 0x143) return -1;
  uint32_t n = cp - 0x100;
  if (n < 33) return static_cast<int>(n);                // 0x00..0x20
  if (n < 67) return static_cast<int>(0x7F + (n - 33));  // 0x7F..0xA0
  return 0xAD;
}

// An open-addressing hash set of strings, stored as indices (+ 1) whose string a callback
// gives: the vocab's token strings, the merges.
uint64_t hash_bytes(const char *s, size_t n) {
  uint64_t h = 0xcbf29ce484222325u;  // FNV-1a
  for (size_t i = 0; i < n; i++) h = (h ^ static_cast<unsigned char>(s[i])) * 0x100000001b3u;
  return h ^ (h >> 29);
}

struct strset {
  uint32_t *slot = nullptr;
  size_t mask = 0;
  ~strset() { free(slot); }
  bool init(size_t n) {
    size_t cap = 16;
    while (cap < 2 * n) cap *= 2;
    slot = static_cast<uint32_t *>(calloc(cap, sizeof(uint32_t)));
    mask = cap - 1;
    return slot != nullptr;
  }
  // key(ctx, idx, &len): the string of index idx
  template <class K>
  bool has(const char *s, size_t n, K key, const void *ctx) const {
    for (size_t h = hash_bytes(s, n) & mask;; h = (h + 1) & mask) {
      if (!slot[h]) return false;
      uint32_t l;
      const char *t = key(ctx, slot[h] - 1, &l);
      if (l == n && (n == 0 || !memcmp(t, s, n))) return true;
    }
  }
  // Adds index idx (string arena + off, n bytes); false, the index already there in *other,
  // if an equal string is in the set.
  template <class K>
  bool add(const char *arena, uint32_t off, size_t n, uint32_t idx, uint32_t *other, K key, const void *ctx) {
    const char *s = arena + off;
    for (size_t h = hash_bytes(s, n) & mask;; h = (h + 1) & mask) {
      if (!slot[h]) {
        slot[h] = idx + 1;
        return true;
      }
      uint32_t l;
      const char *t = key(ctx, slot[h] - 1, &l);
      if (l == n && (n == 0 || !memcmp(t, s, n))) {
        *other = slot[h] - 1;
        return false;
      }
    }
  }
};

struct loader;
const char *ents_key(const void *ctx, uint32_t i, uint32_t *len);
const char *mrgs_key(const void *ctx, uint32_t i, uint32_t *len);

struct loader {
  const char *buf;  // the document (validated by embd_json_validate before the walk)
  size_t len;
  embd_error *err;
  embd_tokmap *m;
  // Strings with escapes, unescaped for reading (those the map keeps are then copied into
  // the arena): each source string is read at most once, so len bytes suffice.
  char *scratch = nullptr;
  size_t scratch_used = 0;
  // The last value read to its end (a string, a container walked): where it started and
  // its end, so the iterator over its parent continues there instead of skipping it again.
  const uint8_t *read_at = nullptr, *read_past = nullptr;
  size_t arena_used = 1;  // arena[0] = "" (an absent published_at)
  ent *ents = nullptr;
  size_t nents = 0, ents_cap = 0;
  spec *specs = nullptr;
  size_t nspecs = 0, specs_cap = 0;
  mrg *mrgs = nullptr;
  size_t nmrgs = 0, mrgs_cap = 0;
  unsigned seen = 0;
  uint64_t vocab = 0, fb_start = 0, fb_end = 0;
  size_t at_vocab = 0, at_fb = 0;
  size_t at_field[15] = {0};  // byte offset of each field's key, by bit number
  int encoder = EMBD_TOKMAP_ENCODER_NONE;
  bool program_null = false;
  // tool_calling.markers (in the arena), checked against special_tokens after the walk
  uint32_t mark_off[2] = {0, 0}, mark_len[2] = {0, 0};
  size_t mark_at[2] = {0, 0};

  ~loader() {
    free(ents);
    free(specs);
    free(mrgs);
    free(spec_ids);
    free(scratch);
  }
  size_t at_of(unsigned bit) const {
    for (unsigned i = 0; i < 15; i++)
      if (bit == (1u << i)) return at_field[i];
    return 0;
  }

  const uint8_t *ubeg() const { return reinterpret_cast<const uint8_t *>(buf); }
  const uint8_t *uend() const { return ubeg() + len; }
  size_t off(const uint8_t *p) const { return static_cast<size_t>(p - ubeg()); }
  embd_result oom(size_t at) { return embd_fail(err, EMBD_ERR_OUT_OF_MEMORY, at, "out of memory parsing the map"); }

  // The string whose opening quote is at p, unescaped: a view of the document when it has
  // no escape, else of scratch.
  bool str(const uint8_t *p, std::string_view *s) {
    int esc = 0;
    const uint8_t *q = embd_json_string_end(p, uend(), &esc);
    read_at = p, read_past = q;
    if (!esc) {
      *s = std::string_view(buf + off(p) + 1, static_cast<size_t>(q - p) - 2);
      return true;
    }
    if (!scratch && !(scratch = static_cast<char *>(malloc(len + 1)))) return false;
    const size_t room = len + 1 - scratch_used;
    const size_t n = embd_json_unescape(p + 1, q - 1, reinterpret_cast<uint8_t *>(scratch + scratch_used), room);
    if (n > room) return false;  // cannot happen (see above)
    *s = std::string_view(scratch + scratch_used, n);
    scratch_used += n;
    return true;
  }

  // The members of the object at v: f(key, byte of its opening quote, value) for each, in
  // order, up to the first error.
  template <class F>
  embd_result each_member(const uint8_t *v, F f) {
    embd_json_iter it;
    embd_json_iter_init(&it, v, uend());
    const uint8_t *k = nullptr;
    while (embd_json_iter_next(&it, &k)) {
      std::string_view key;
      if (!str(k, &key)) return oom(off(k));
      if (embd_result r = f(key, off(k), it.at)) return r;
      if (read_at == it.at) it.past = read_past;
    }
    read_at = v, read_past = it.past;
    return EMBD_OK;
  }
  // The elements of the array at v: f(byte where it starts, element).
  template <class F>
  embd_result each_elem(const uint8_t *v, F f) {
    embd_json_iter it;
    embd_json_iter_init(&it, v, uend());
    while (embd_json_iter_next(&it, nullptr)) {
      if (embd_result r = f(off(it.at), it.at)) return r;
      if (read_at == it.at) it.past = read_past;
    }
    read_at = v, read_past = it.past;
    return EMBD_OK;
  }

  // The same as a loop (its body may continue or return): while (w.next()) { w.key, w.kat,
  // w.v } then `if (w.r) return w.r;` (out of memory unescaping a key).
  struct walk {
    loader *L;
    embd_json_iter it;
    std::string_view key;
    size_t kat = 0, at = 0;  // the key's opening quote, the value's first byte
    const uint8_t *v = nullptr;
    embd_result r = EMBD_OK;
    const uint8_t *start;
    walk(loader *l, const uint8_t *p) : L(l), start(p) { embd_json_iter_init(&it, p, l->uend()); }
    bool next() {
      const uint8_t *k = nullptr;
      if (it.started && L->read_at == it.at) it.past = L->read_past;
      if (!embd_json_iter_next(&it, &k)) {
        L->read_at = start, L->read_past = it.past;
        return false;
      }
      v = it.at;
      at = L->off(v);
      if (k) {
        kat = L->off(k);
        if (!L->str(k, &key)) {
          r = L->oom(kat);
          return false;
        }
      }
      return true;
    }
  };

  embd_result not_a(const char *what, const char *type, size_t at) {
    return embd_fail(err, EMBD_ERR_MAP_SCHEMA, at, "%s: not %s (map byte %zu)", what, type, at);
  }

  // The one way every field checks the JSON type it wants: another type is "<what>: not
  // <type> (map byte <at>)". `what` is a name or a callable making one (called only on an
  // error: merges has 10^5 elements).
  template <class W>
  static const char *name_of(W what) {
    if constexpr (std::is_invocable_v<W>) return what();
    else return what;
  }
  template <class W>
  embd_result want(const uint8_t *v, char c, W what, size_t at, const char *type) {
    return *v == c ? EMBD_OK : not_a(name_of(what), type, at);
  }
  template <class W>
  embd_result want_obj(const uint8_t *v, W what, size_t at, const char *type = "an object") {
    return want(v, '{', what, at, type);
  }
  template <class W>
  embd_result want_arr(const uint8_t *v, W what, size_t at) { return want(v, '[', what, at, "an array"); }
  template <class W>
  embd_result want_str(const uint8_t *v, W what, size_t at, std::string_view *s) {
    if (embd_result r = want(v, '"', what, at, "a string")) return r;
    return str(v, s) ? EMBD_OK : oom(at);
  }

  // Copies s (plus a NUL) into the arena; its offset in *o.
  bool keep(std::string_view s, uint32_t *o) {
    if (s.size() + 1 > m->arena_len - arena_used) return false;  // cannot happen (see top)
    memcpy(m->arena + arena_used, s.data(), s.size());
    m->arena[arena_used + s.size()] = 0;
    *o = static_cast<uint32_t>(arena_used);
    arena_used += s.size() + 1;
    return true;
  }
  embd_result arena_fail() { return embd_fail(err, EMBD_ERR_OUT_OF_MEMORY, 0, "map arena overflow"); }

  // A string field (id, version, published_at).
  embd_result str_field(const uint8_t *v, const char *what, size_t at, uint32_t *o) {
    std::string_view s;
    if (embd_result r = want_str(v, what, at, &s)) return r;
    if (!keep(s, o)) return arena_fail();
    return EMBD_OK;
  }

  // A non-negative integer (vocab_size, byte_fallback_*, special_tokens values): a number
  // without fraction or exponent, 0..2^64-1.
  // what() names the field in a message: only called on an error (a vocab has 10^5 of them).
  template <class W>
  embd_result uint_field_w(const uint8_t *v, W what, size_t at, uint64_t *u) {
    int64_t i = 0;
    const int k = (*v == '-' || (*v >= '0' && *v <= '9')) ? embd_json_int(v, uend(), u, &i) : EMBD_JSON_NOT_INT;
    if (k == EMBD_JSON_UINT) return EMBD_OK;
    if (k == EMBD_JSON_NEG)
      return embd_fail(err, EMBD_ERR_MAP_SCHEMA, at, "%s: %lld is negative (map byte %zu)", what(),
                       static_cast<long long>(i), at);
    return embd_fail(err, EMBD_ERR_MAP_SCHEMA, at, "%s: not an integer (map byte %zu)", what(), at);
  }
  embd_result uint_field(const uint8_t *v, const char *what, size_t at, uint64_t *u) {
    return uint_field_w(v, [what] { return what; }, at, u);
  }

  embd_result tokens(const uint8_t *v, size_t at) {
    if (embd_result r = want_obj(v, "tokens", at)) return r;
    return each_member(v, [&](std::string_view key, size_t kat, const uint8_t *fv) -> embd_result {
      // A canonical decimal id: digits, no sign, no leading zero, below 2^32.
      uint64_t id = 0;
      bool ok = !key.empty() && key.size() <= 10 && !(key.size() > 1 && key[0] == '0');
      for (size_t i = 0; ok && i < key.size(); i++) {
        if (key[i] < '0' || key[i] > '9') ok = false;
        else id = id * 10 + static_cast<uint64_t>(key[i] - '0');
      }
      if (!ok || id > UINT32_MAX) {
        char shown[24];
        size_t k = key.size() < 16 ? key.size() : 16;
        memcpy(shown, key.data(), k);
        shown[k] = 0;
        for (size_t i = 0; i < k; i++)
          if (static_cast<unsigned char>(shown[i]) < 0x20 || static_cast<unsigned char>(shown[i]) >= 0x7F) shown[i] = '?';
        return embd_fail(err, EMBD_ERR_MAP_SCHEMA, kat,
                    "tokens[\"%s%s\"]: key is not a token id (decimal 0..4294967295, no "
                    "leading zeros) (map byte %zu)",
                    shown, key.size() > 16 ? "..." : "", kat);
      }
      if (*fv != '"')
        return embd_fail(err, EMBD_ERR_MAP_SCHEMA, kat,
                         "tokens[\"%llu\"]: value is not a string (map byte %zu)",
                         static_cast<unsigned long long>(id), kat);
      std::string_view s;
      if (!str(fv, &s)) return oom(kat);
      // Valid JSON strings are valid UTF-8 (embd_json_validate): this is a second guard.
      if (embd_codec_utf8_check(s.data(), s.size()) != 0)
        return embd_fail(err, EMBD_ERR_MAP_SCHEMA, kat,
                    "tokens[\"%llu\"]: not valid UTF-8 (an escaped lone surrogate?) (map byte %zu)",
                    static_cast<unsigned long long>(id), kat);
      ent e;
      e.id = static_cast<uint32_t>(id);
      e.len = static_cast<uint32_t>(s.size());
      e.at = static_cast<uint32_t>(kat);
      if (!keep(s, &e.off)) return arena_fail();
      if (!push(&ents, &nents, &ents_cap, e))
        return embd_fail(err, EMBD_ERR_OUT_OF_MEMORY, kat, "out of memory for the tokens");
      return EMBD_OK;
    });
  }

  embd_result special_tokens(const uint8_t *v, size_t at) {
    if (embd_result r = want_obj(v, "special_tokens", at)) return r;
    return each_member(v, [&](std::string_view key, size_t kat, const uint8_t *fv) -> embd_result {
      if (embd_codec_utf8_check(key.data(), key.size()) != 0)
        return embd_fail(err, EMBD_ERR_MAP_SCHEMA, kat,
                    "special_tokens: a name is not valid UTF-8 (map byte %zu)", kat);
      spec sp;
      if (!keep(key, &sp.name_off)) return arena_fail();
      sp.name_len = static_cast<uint32_t>(key.size());
      sp.at = static_cast<uint32_t>(kat);
      char what[96];
      snprintf(what, sizeof what, "special_tokens[\"%.40s%s\"]", m->arena + sp.name_off,
               key.size() > 40 ? "..." : "");
      uint64_t id;
      if (embd_result r = uint_field(fv, what, kat, &id)) return r;
      if (id > UINT32_MAX)
        return embd_fail(err, EMBD_ERR_MAP_SCHEMA, kat, "%s: id %llu above 4294967295 (map byte %zu)",
                    what, static_cast<unsigned long long>(id), kat);
      sp.id = static_cast<uint32_t>(id);
      if (!push(&specs, &nspecs, &specs_cap, sp))
        return embd_fail(err, EMBD_ERR_OUT_OF_MEMORY, kat, "out of memory for the special tokens");
      return EMBD_OK;
    });
  }

  // ---- schema v2 / v2.1 fields ------------------------------------------------------------

  // vocab: token string -> id. Keys are kept as written; check() decodes them once the
  // encoder is known (it may come after the vocab).
  embd_result vocab_obj(const uint8_t *v, size_t at) {
    if (embd_result r = want_obj(v, "vocab", at)) return r;
    embd_result r = each_member(v, [&](std::string_view key, size_t kat, const uint8_t *fv) -> embd_result {
      if (key.empty())
        return embd_fail(err, EMBD_ERR_MAP_SCHEMA, kat, "vocab[\"\"]: empty token string (map byte %zu)", kat);
      if (embd_codec_utf8_check(key.data(), key.size()) != 0)
        return embd_fail(err, EMBD_ERR_MAP_SCHEMA, kat,
                         "vocab: a token string is not valid UTF-8 (an escaped lone surrogate?) (map byte %zu)", kat);
      ent e;
      if (!keep(key, &e.off)) return arena_fail();
      e.len = static_cast<uint32_t>(key.size());
      e.at = static_cast<uint32_t>(kat);
      char sh[48], what[64];
      auto name = [&] {
        snprintf(what, sizeof what, "vocab[\"%s\"]", show(key.data(), key.size(), sh));
        return what;
      };
      uint64_t id = 0;
      if (embd_result r2 = uint_field_w(fv, name, kat, &id)) return r2;
      if (id > UINT32_MAX)
        return embd_fail(err, EMBD_ERR_MAP_SCHEMA, kat, "%s: id %llu above 4294967295 (map byte %zu)", name(),
                         static_cast<unsigned long long>(id), kat);
      e.id = static_cast<uint32_t>(id);
      if (!push(&ents, &nents, &ents_cap, e))
        return embd_fail(err, EMBD_ERR_OUT_OF_MEMORY, kat, "out of memory for the vocab");
      return EMBD_OK;
    });
    if (r) return r;
    if (!nents) return embd_fail(err, EMBD_ERR_MAP_SCHEMA, at, "vocab: empty (map byte %zu)", at);
    return EMBD_OK;
  }

  embd_result encoder_field(const uint8_t *v, size_t at) {
    std::string_view s;
    if (embd_result r = want_str(v, "encoder", at, &s)) return r;
    if (s == "byte_level") encoder = EMBD_TOKMAP_ENCODER_BYTE_LEVEL;
    else if (s == "metaspace") encoder = EMBD_TOKMAP_ENCODER_METASPACE;
    else {
      char sh[48];
      return embd_fail(err, EMBD_ERR_MAP_SCHEMA, at,
                       "encoder: \"%s\" is not \"byte_level\" or \"metaspace\" (map byte %zu)",
                       show(s.data(), s.size(), sh), at);
    }
    return EMBD_OK;
  }

  // merges: "left right" strings, kept for check() (their tokens must be in the vocab).
  embd_result merges_arr(const uint8_t *v, size_t at) {
    if (embd_result r = want_arr(v, "merges", at)) return r;
    size_t i = 0;
    return each_elem(v, [&](size_t eat, const uint8_t *e) -> embd_result {
      std::string_view s;
      char what[48];
      auto name = [&] {
        snprintf(what, sizeof what, "merges[%zu]", i);
        return what;
      };
      if (embd_result r = want_str(e, name, eat, &s)) return r;
      mrg m1;
      if (!keep(s, &m1.off)) return arena_fail();
      m1.len = static_cast<uint32_t>(s.size());
      m1.at = static_cast<uint32_t>(eat);
      if (!push(&mrgs, &nmrgs, &mrgs_cap, m1))
        return embd_fail(err, EMBD_ERR_OUT_OF_MEMORY, eat, "out of memory for the merges");
      i++;
      return EMBD_OK;
    });
  }

  embd_result pattern_field(const uint8_t *v, size_t at) {
    std::string_view s;
    if (embd_result r = want_str(v, "pre_tokenizer_pattern", at, &s)) return r;
    if (s.empty())
      return embd_fail(err, EMBD_ERR_MAP_SCHEMA, at, "pre_tokenizer_pattern: empty (map byte %zu)", at);
    return EMBD_OK;
  }

  // ---- pre_tokenizer_program ---------------------------------------------------------------
  // Versions 1 ({"version": 1, "ops": [...]}: spec/PRETOKENIZER_PROGRAM.md) and 2
  // ({"version": 2, "stages": [...]}: HF Sequence pre-tokenizers), the ops and stages and
  // their parameters as the reference interpreters run them (docs/TOKMAP.md).

  enum pkind { P_OTHER, P_BOOL, P_UINT, P_STRS, P_STR };
  struct param {
    std::string_view key;
    int kind;        // pkind of the value
    uint64_t u;      // P_BOOL / P_UINT
    std::string_view s;  // P_STR
    size_t bad, at;  // P_STRS check: bad = 0 ok, else 1 + index of the first bad element
    int why;         // 1 not a string, 2 empty, 3 empty array
  };
  struct pdef {
    const char *name;
    int kind;                     // pkind wanted
    const char *const *choices;   // P_STR: the allowed strings (NULL: any)
  };
  struct odef {
    const char *name;
    pdef p[4];
  };

  // Reads the members of one op or stage object into ps (the name member `namekey` into
  // *name); "ops" (a stage's op list) is checked on the spot by program_ops.
  embd_result members(const uint8_t *o, const char *what, const char *namekey, std::string_view *name,
                      bool *have_name, param *ps, size_t *np, size_t cap, size_t *ops_at, bool *have_ops) {
    return each_member(o, [&](std::string_view key, size_t kat, const uint8_t *pv) -> embd_result {
      char sh[48];
      if (key == namekey) {
        if (*have_name)
          return embd_fail(err, EMBD_ERR_MAP_SCHEMA, kat, "%s.%s: field appears twice (map byte %zu)", what, namekey, kat);
        if (*pv != '"')
          return embd_fail(err, EMBD_ERR_MAP_SCHEMA, kat, "%s.%s: not a string (map byte %zu)", what, namekey, kat);
        if (!str(pv, name)) return oom(kat);
        *have_name = true;
        return EMBD_OK;
      }
      for (size_t j = 0; j < *np; j++)
        if (ps[j].key == key)
          return embd_fail(err, EMBD_ERR_MAP_SCHEMA, kat, "%s.%s: field appears twice (map byte %zu)", what,
                           show(key.data(), key.size(), sh), kat);
      if (ops_at && key == "ops") {
        if (*have_ops)
          return embd_fail(err, EMBD_ERR_MAP_SCHEMA, kat, "%s.ops: field appears twice (map byte %zu)", what, kat);
        *have_ops = true;
        *ops_at = kat;
        char w2[96];
        snprintf(w2, sizeof w2, "%s.ops", what);
        return program_ops(pv, w2, kat, false);
      }
      if (*np == cap)
        return embd_fail(err, EMBD_ERR_MAP_SCHEMA, kat, "%s: too many fields (map byte %zu)", what, kat);
      param p{key, P_OTHER, 0, {}, 0, kat, 0};
      if (*pv == 't' || *pv == 'f') {
        p.kind = P_BOOL;
        p.u = *pv == 't';
      } else if (*pv == '-' || (*pv >= '0' && *pv <= '9')) {
        int64_t x;
        if (embd_json_int(pv, uend(), &p.u, &x) == EMBD_JSON_UINT) p.kind = P_UINT;  // else P_OTHER
      } else if (*pv == '"') {
        if (!str(pv, &p.s)) return oom(kat);
        p.kind = P_STR;
      } else if (*pv == '[') {
        size_t k = 0;
        if (embd_result r = each_elem(pv, [&](size_t eat, const uint8_t *e) -> embd_result {
              std::string_view es;
              bool is_str = *e == '"';
              if (is_str && !str(e, &es)) return oom(eat);
              if (!p.bad && (!is_str || es.empty())) p.bad = k + 1, p.why = is_str ? 2 : 1, p.at = eat;
              k++;
              return EMBD_OK;
            }))
          return r;
        if (!k) p.bad = 1, p.why = 3;
        p.kind = P_STRS;
      }
      ps[(*np)++] = p;
      return EMBD_OK;
    });
  }

  // Checks ps against the parameters of def (all optional; none other).
  embd_result check_params(const char *what, const odef &def, const param *ps, size_t np) {
    char sh[48];
    for (size_t j = 0; j < np; j++) {
      const pdef *pd = nullptr;
      for (const pdef &c : def.p)
        if (c.name && ps[j].key == c.name) pd = &c;
      if (!pd)
        return embd_fail(err, EMBD_ERR_MAP_SCHEMA, ps[j].at, "%s.%s: not a parameter of \"%s\" (map byte %zu)", what,
                         show(ps[j].key.data(), ps[j].key.size(), sh), def.name, ps[j].at);
      if (pd->kind == P_STRS && ps[j].kind == P_STRS && ps[j].bad) {
        if (ps[j].why == 3)
          return embd_fail(err, EMBD_ERR_MAP_SCHEMA, ps[j].at, "%s.%s: empty (map byte %zu)", what, pd->name, ps[j].at);
        return embd_fail(err, EMBD_ERR_MAP_SCHEMA, ps[j].at, "%s.%s[%zu]: %s (map byte %zu)", what, pd->name,
                         ps[j].bad - 1, ps[j].why == 1 ? "not a string" : "empty", ps[j].at);
      }
      if (ps[j].kind != pd->kind)
        return embd_fail(err, EMBD_ERR_MAP_SCHEMA, ps[j].at, "%s.%s: not %s (map byte %zu)", what, pd->name,
                         pd->kind == P_BOOL ? "a boolean"
                         : pd->kind == P_UINT ? "a non-negative integer"
                         : pd->kind == P_STRS ? "an array of strings"
                                              : "a string",
                         ps[j].at);
      if (pd->kind == P_STR && pd->choices) {
        bool ok = false;
        for (const char *const *c = pd->choices; *c; c++) ok = ok || ps[j].s == *c;
        if (!ok)
          return embd_fail(err, EMBD_ERR_MAP_SCHEMA, ps[j].at, "%s.%s: \"%s\" is not one of its values (map byte %zu)",
                           what, pd->name, show(ps[j].s.data(), ps[j].s.size(), sh), ps[j].at);
      }
    }
    return EMBD_OK;
  }

  static const param *find_param(const param *ps, size_t np, const char *k) {
    for (size_t j = 0; j < np; j++)
      if (ps[j].key == k) return &ps[j];
    return nullptr;
  }

  // One op of an alternation (a version-1 program's ops, a version-2 alternation stage's).
  // *metaspace: it is metaspace_split (a version-1 program's only op, never in a stage).
  embd_result program_op(const uint8_t *v, const char *list, size_t i, size_t at, bool *metaspace) {
    static const char *const lps[] = {"l_p_s", nullptr}, *const lm[] = {"L_M", nullptr},
                             *const kinds[] = {"title", "upper", nullptr}, *const ps_[] = {"p_s", nullptr};
    static const odef ops[] = {
        {"literals_ci", {{"patterns", P_STRS, nullptr}, {}, {}, {}}},
        {"literals", {{"patterns", P_STRS, nullptr}, {}, {}, {}}},
        {"letters", {{"lead_other", P_BOOL, nullptr}, {"lead_other_class", P_STR, lps}, {"body", P_STR, lm},
                     {"lead_space", P_BOOL, nullptr}}},
        {"letters_cased", {{"kind", P_STR, kinds}, {"lead_other", P_BOOL, nullptr}, {"trailing_ci", P_STRS, nullptr}, {}}},
        {"numbers", {{"max_run", P_UINT, nullptr}, {"lead_space", P_BOOL, nullptr}, {}, {}}},
        {"punct_run", {{"lead_space", P_BOOL, nullptr}, {"trailing_newlines", P_BOOL, nullptr},
                       {"charset", P_STR, ps_}, {"trailing_chars", P_STR, nullptr}}},
        {"punct_ascii_letters", {{}, {}, {}, {}}},
        {"newline_block", {{}, {}, {}, {}}},
        {"trailing_ws", {{}, {}, {}, {}}},
        {"ws_run", {{}, {}, {}, {}}},
        {"metaspace_split", {{"prefix_first", P_BOOL, nullptr}, {}, {}, {}}},
    };
    char what[112];
    snprintf(what, sizeof what, "%s[%zu]", list, i);
    if (embd_result r = want_obj(v, what, at)) return r;
    std::string_view op;
    bool have_op = false;
    param ps[8];
    size_t np = 0;
    if (embd_result r = members(v, what, "op", &op, &have_op, ps, &np, 8, nullptr, nullptr)) return r;
    if (!have_op)
      return embd_fail(err, EMBD_ERR_MAP_SCHEMA, at, "%s.op: required field missing (map byte %zu)", what, at);
    const odef *def = nullptr;
    for (const odef &d : ops)
      if (op == d.name) def = &d;
    char sh[48];
    if (!def)
      return embd_fail(err, EMBD_ERR_MAP_SCHEMA, at, "%s.op: \"%s\" is not a pre-tokenizer op (map byte %zu)", what,
                       show(op.data(), op.size(), sh), at);
    if (embd_result r = check_params(what, *def, ps, np)) return r;
    if ((op == "literals_ci" || op == "literals") && !find_param(ps, np, "patterns"))
      return embd_fail(err, EMBD_ERR_MAP_SCHEMA, at, "%s.patterns: required field missing (map byte %zu)", what, at);
    const param *lo = find_param(ps, np, "lead_other"), *ls = find_param(ps, np, "lead_space");
    if (op == "letters" && lo && lo->u && ls && ls->u)
      return embd_fail(err, EMBD_ERR_MAP_SCHEMA, ls->at, "%s: lead_other and lead_space both true (they exclude each "
                       "other) (map byte %zu)", what, ls->at);
    *metaspace = op == "metaspace_split";
    return EMBD_OK;
  }

  // An op list: a non-empty array of ops; metaspace_split only as a version-1 program's one op.
  embd_result program_ops(const uint8_t *v, const char *what, size_t at, bool v1) {
    if (embd_result r = want_arr(v, what, at)) return r;
    size_t i = 0, meta_at = 0;
    bool meta = false;
    walk w(this, v);
    while (w.next()) {
      const uint8_t *e = w.v;
      size_t eat = w.at;
      bool ms = false;
      if (embd_result r = program_op(e, what, i, eat, &ms)) return r;
      if (ms && !meta) meta = true, meta_at = eat;
      i++;
    }
    if (!i) return embd_fail(err, EMBD_ERR_MAP_SCHEMA, at, "%s: empty (map byte %zu)", what, at);
    if (meta && (!v1 || i > 1))
      return embd_fail(err, EMBD_ERR_MAP_SCHEMA, meta_at,
                       "%s: metaspace_split is a version-1 program's only op, not one op among others or in a "
                       "stage (map byte %zu)", what, meta_at);
    return EMBD_OK;
  }

  embd_result program_stage(const uint8_t *v, size_t i, size_t at) {
    static const char *const modes[] = {"individual", "grouped", nullptr};
    static const odef stages[] = {
        {"digits_isolate", {{"mode", P_STR, modes}, {"max_run", P_UINT, nullptr}, {}, {}}},
        {"digit_triples_isolate", {{}, {}, {}, {}}},
        {"punctuation_contiguous", {{}, {}, {}, {}}},
        {"cjk_isolate", {{}, {}, {}, {}}},
        {"alternation", {{}, {}, {}, {}}},  // its "ops" are read by members()
    };
    char what[64];
    snprintf(what, sizeof what, "pre_tokenizer_program.stages[%zu]", i);
    if (embd_result r = want_obj(v, what, at)) return r;
    std::string_view st;
    bool have_st = false, have_ops = false;
    size_t ops_at = 0;
    param ps[8];
    size_t np = 0;
    if (embd_result r = members(v, what, "stage", &st, &have_st, ps, &np, 8, &ops_at, &have_ops)) return r;
    if (!have_st)
      return embd_fail(err, EMBD_ERR_MAP_SCHEMA, at, "%s.stage: required field missing (map byte %zu)", what, at);
    const odef *def = nullptr;
    for (const odef &d : stages)
      if (st == d.name) def = &d;
    char sh[48];
    if (!def)
      return embd_fail(err, EMBD_ERR_MAP_SCHEMA, at, "%s.stage: \"%s\" is not a pre-tokenizer stage (map byte %zu)",
                       what, show(st.data(), st.size(), sh), at);
    if (embd_result r = check_params(what, *def, ps, np)) return r;
    bool alt = st == "alternation";
    if (alt && !have_ops)
      return embd_fail(err, EMBD_ERR_MAP_SCHEMA, at, "%s.ops: required field missing (map byte %zu)", what, at);
    if (!alt && have_ops)
      return embd_fail(err, EMBD_ERR_MAP_SCHEMA, ops_at, "%s.ops: not a parameter of \"%s\" (map byte %zu)", what,
                       def->name, ops_at);
    return EMBD_OK;
  }

  // pre_tokenizer_program (v2.1): null (the converter's "no program"), or a version-1 or
  // version-2 program.
  embd_result program(const uint8_t *v, size_t at) {
    if (*v == 'n') {
      program_null = true;
      return EMBD_OK;
    }
    if (embd_result r = want_obj(v, "pre_tokenizer_program", at, "an object or null")) return r;
    // version may follow the list: ops and stages are checked as they come, which one the
    // version allows afterwards
    uint64_t ver = 0;
    bool have_version = false, have_ops = false, have_stages = false;
    size_t ops_at = 0, stages_at = 0;
    walk w(this, v);
    while (w.next()) {
      std::string_view key = w.key;
      size_t kat = w.kat;
      if (key == "version") {
        if (have_version)
          return embd_fail(err, EMBD_ERR_MAP_SCHEMA, kat, "pre_tokenizer_program.version: field appears twice (map byte %zu)", kat);
        have_version = true;
        if (embd_result r = uint_field(w.v, "pre_tokenizer_program.version", kat, &ver)) return r;
        if (ver != 1 && ver != 2)
          return embd_fail(err, EMBD_ERR_MAP_SCHEMA, kat,
                           "pre_tokenizer_program.version: %llu is not 1 or 2 (map byte %zu)",
                           static_cast<unsigned long long>(ver), kat);
      } else if (key == "ops") {
        if (have_ops)
          return embd_fail(err, EMBD_ERR_MAP_SCHEMA, kat, "pre_tokenizer_program.ops: field appears twice (map byte %zu)", kat);
        have_ops = true;
        ops_at = kat;
        if (embd_result r = program_ops(w.v, "pre_tokenizer_program.ops", kat, true)) return r;
      } else if (key == "stages") {
        if (have_stages)
          return embd_fail(err, EMBD_ERR_MAP_SCHEMA, kat, "pre_tokenizer_program.stages: field appears twice (map byte %zu)", kat);
        have_stages = true;
        stages_at = kat;
        if (embd_result r = want_arr(w.v, "pre_tokenizer_program.stages", kat)) return r;
        size_t i = 0;
        walk ws(this, w.v);
        while (ws.next()) {
          const uint8_t *e = ws.v;
          size_t eat = ws.at;
          if (embd_result r = program_stage(e, i, eat)) return r;
          i++;
        }
        if (!i) return embd_fail(err, EMBD_ERR_MAP_SCHEMA, kat, "pre_tokenizer_program.stages: empty (map byte %zu)", kat);
      } else {
        char sh[48];
        return embd_fail(err, EMBD_ERR_MAP_SCHEMA, kat,
                         "pre_tokenizer_program.\"%s\": not a field of a pre-tokenizer program (map byte %zu)",
                         show(key.data(), key.size(), sh), kat);
      }
    }
    if (w.r) return w.r;
    if (!have_version)
      return embd_fail(err, EMBD_ERR_MAP_SCHEMA, at, "pre_tokenizer_program.version: required field missing (map byte %zu)", at);
    if (ver == 1 && have_stages)
      return embd_fail(err, EMBD_ERR_MAP_SCHEMA, stages_at,
                       "pre_tokenizer_program.stages: not a field of a version-1 program (map byte %zu)", stages_at);
    if (ver == 2 && have_ops)
      return embd_fail(err, EMBD_ERR_MAP_SCHEMA, ops_at,
                       "pre_tokenizer_program.ops: not a field of a version-2 program (its ops are in "
                       "\"alternation\" stages) (map byte %zu)", ops_at);
    if (ver == 1 && !have_ops)
      return embd_fail(err, EMBD_ERR_MAP_SCHEMA, at, "pre_tokenizer_program.ops: required field missing (map byte %zu)", at);
    if (ver == 2 && !have_stages)
      return embd_fail(err, EMBD_ERR_MAP_SCHEMA, at, "pre_tokenizer_program.stages: required field missing (map byte %zu)", at);
    return EMBD_OK;
  }

  // A string member of an object that must be one of a closed set (set == NULL: any
  // non-empty string, kept in the arena when keep_off != NULL).
  embd_result enum_str(const uint8_t *v, const char *what, size_t at, const char *const *set,
                       uint32_t *keep_off = nullptr, uint32_t *keep_len = nullptr,
                       int *idx = nullptr) {
    std::string_view s;
    if (embd_result r = want_str(v, what, at, &s)) return r;
    if (!set) {
      if (s.empty()) return embd_fail(err, EMBD_ERR_MAP_SCHEMA, at, "%s: empty (map byte %zu)", what, at);
      if (keep_off) {
        if (!keep(s, keep_off)) return arena_fail();
        *keep_len = static_cast<uint32_t>(s.size());
      }
      return EMBD_OK;
    }
    for (const char *const *p = set; *p; p++)
      if (s == *p) {
        if (idx) *idx = static_cast<int>(p - set);
        return EMBD_OK;
      }
    char sh[48], list[160] = "";
    for (const char *const *p = set; *p; p++) {
      size_t l = strlen(list);
      snprintf(list + l, sizeof list - l, "%s\"%s\"", p == set ? "" : ", ", *p);
    }
    return embd_fail(err, EMBD_ERR_MAP_SCHEMA, at, "%s: \"%s\" is not one of %s (map byte %zu)", what,
                     show(s.data(), s.size(), sh), list, at);
  }

  // tool_calling (v2.1, spec § "Tool-call calling conventions in the map"): every member
  // required; the markers must be keys of special_tokens (checked after the walk).
  embd_result tool_calling(const uint8_t *v, size_t at) {
    static const char *const conventions[] = {"llama3", "qwen25", "phi4", "mistral_nemo", "deepseek_v3",
                                              "deepseek_r1", "custom", nullptr};
    static const char *const args[] = {"json", "python_args", nullptr};
    static const char *const results[] = {"text", "json", nullptr};
    if (embd_result r = want_obj(v, "tool_calling", at)) return r;
    unsigned got = 0;
    walk w(this, v);
    while (w.next()) {
      std::string_view key = w.key;
      size_t kat = w.kat;
      static const char *const names[] = {"convention", "markers", "args_format", "result_format"};
      int which = -1;
      for (int k = 0; k < 4; k++)
        if (key == names[k]) which = k;
      char sh[48];
      if (which < 0)
        return embd_fail(err, EMBD_ERR_MAP_SCHEMA, kat, "tool_calling.\"%s\": not a field of tool_calling (map byte %zu)",
                         show(key.data(), key.size(), sh), kat);
      if (got & (1u << which))
        return embd_fail(err, EMBD_ERR_MAP_SCHEMA, kat, "tool_calling.%s: field appears twice (map byte %zu)",
                         names[which], kat);
      got |= 1u << which;
      embd_result r = EMBD_OK;
      if (which == 0) r = enum_str(w.v, "tool_calling.convention", kat, conventions);
      else if (which == 2) r = enum_str(w.v, "tool_calling.args_format", kat, args);
      else if (which == 3) r = enum_str(w.v, "tool_calling.result_format", kat, results);
      else r = markers(w.v, kat);
      if (r) return r;
    }
    if (w.r) return w.r;
    static const char *const req[] = {"convention", "markers", "args_format", "result_format"};
    for (int k = 0; k < 4; k++)
      if (!(got & (1u << k)))
        return embd_fail(err, EMBD_ERR_MAP_SCHEMA, at, "tool_calling.%s: required field missing (map byte %zu)",
                         req[k], at);
    return EMBD_OK;
  }

  embd_result markers(const uint8_t *v, size_t at) {
    if (embd_result r = want_obj(v, "tool_calling.markers", at)) return r;
    unsigned got = 0;
    walk w(this, v);
    while (w.next()) {
      std::string_view key = w.key;
      size_t kat = w.kat;
      int k = key == "start" ? 0 : key == "end" ? 1 : -1;
      char sh[48];
      if (k < 0)
        return embd_fail(err, EMBD_ERR_MAP_SCHEMA, kat, "tool_calling.markers.\"%s\": not start or end (map byte %zu)",
                         show(key.data(), key.size(), sh), kat);
      if (got & (1u << k))
        return embd_fail(err, EMBD_ERR_MAP_SCHEMA, kat, "tool_calling.markers.%s: field appears twice (map byte %zu)",
                         k ? "end" : "start", kat);
      got |= 1u << k;
      mark_at[k] = kat;
      if (embd_result r = enum_str(w.v, k ? "tool_calling.markers.end" : "tool_calling.markers.start", kat,
                                   nullptr, &mark_off[k], &mark_len[k]))
        return r;
    }
    if (w.r) return w.r;
    for (int k = 0; k < 2; k++)
      if (!(got & (1u << k)))
        return embd_fail(err, EMBD_ERR_MAP_SCHEMA, at, "tool_calling.markers.%s: required field missing (map byte %zu)",
                         k ? "end" : "start", at);
    return EMBD_OK;
  }

  // zstd_dictionaries (spec § "Pre-trained ZSTD dictionaries"): entries {format, url, hash,
  // size_bytes?}, at most one per wire format.
  embd_result zstd(const uint8_t *v, size_t at) {
    static const char *const formats[] = {"msgpack", "protobuf", nullptr};
    if (embd_result r = want_arr(v, "zstd_dictionaries", at)) return r;
    size_t i = 0;
    unsigned formats_seen = 0;
    walk we(this, v);
    while (we.next()) {
      const uint8_t *e = we.v;
      size_t eat = we.at;
      char what[48];
      snprintf(what, sizeof what, "zstd_dictionaries[%zu]", i);
      if (embd_result r = want_obj(e, what, eat)) return r;
      unsigned got = 0;
      walk w(this, e);
      while (w.next()) {
        std::string_view key = w.key;
        size_t kat = w.kat;
        static const char *const names[] = {"format", "url", "hash", "size_bytes"};
        int k = -1;
        for (int j = 0; j < 4; j++)
          if (key == names[j]) k = j;
        char sh[48], w2[80];
        if (k < 0)
          return embd_fail(err, EMBD_ERR_MAP_SCHEMA, kat, "%s.\"%s\": not a field of a dictionary entry (map byte %zu)",
                           what, show(key.data(), key.size(), sh), kat);
        snprintf(w2, sizeof w2, "%s.%s", what, names[k]);
        if (got & (1u << k))
          return embd_fail(err, EMBD_ERR_MAP_SCHEMA, kat, "%s: field appears twice (map byte %zu)", w2, kat);
        got |= 1u << k;
        embd_result r = EMBD_OK;
        if (k == 0) {
          int fi = -1;
          r = enum_str(w.v, w2, kat, formats, nullptr, nullptr, &fi);
          if (!r && (formats_seen & (1u << fi)))
            return embd_fail(err, EMBD_ERR_MAP_SCHEMA, kat,
                             "%s: a second dictionary for format \"%s\" (map byte %zu)", w2, formats[fi], kat);
          if (!r) formats_seen |= 1u << fi;
        } else if (k == 1) {
          r = enum_str(w.v, w2, kat, nullptr);
        } else if (k == 2) {
          std::string_view s;
          if ((r = want_str(w.v, w2, kat, &s))) return r;
          char norm[72];
          if (!embd_sha256_pin_norm_(s.data(), s.size(), norm))
            return embd_fail(err, EMBD_ERR_MAP_SCHEMA, kat,
                             "%s: not \"sha256:\" and 64 hex digits (map byte %zu)", w2, kat);
        } else {
          uint64_t sz;
          r = uint_field(w.v, w2, kat, &sz);
          if (!r && sz < 1)
            return embd_fail(err, EMBD_ERR_MAP_SCHEMA, kat, "%s: 0, a dictionary has bytes (map byte %zu)", w2, kat);
        }
        if (r) return r;
      }
      if (w.r) return w.r;
      static const char *const req[] = {"format", "url", "hash"};
      for (int k = 0; k < 3; k++)
        if (!(got & (1u << k)))
          return embd_fail(err, EMBD_ERR_MAP_SCHEMA, eat, "%s.%s: required field missing (map byte %zu)", what,
                           req[k], eat);
      i++;
    }
    return EMBD_OK;
  }

  embd_result parse() {
    // The strict pass first (RFC 8259, UTF-8, depth: json_strict.h): it names the fault and
    // its byte; the walk below then reads a valid text.
    embd_json j;
    embd_json_init(&j, buf, len);
    if (embd_json_validate(&j, 0) != 0) {
      size_t at = embd_json_fault_offset(&j);
      return embd_fail(err, EMBD_ERR_MAP_SCHEMA, at, "malformed JSON: %s (map byte %zu)", j.fault, at);
    }
    const uint8_t *root = embd_json_ws(ubeg(), uend());
    if (*root != '{') return embd_fail(err, EMBD_ERR_MAP_SCHEMA, 0, "the map is not a JSON object (map byte 0)");
    walk w(this, root);
    while (w.next()) {
      std::string_view key = w.key;
      size_t kat = w.kat;
      static const struct {
        const char *name;
        unsigned bit;
      } known[] = {{"id", F_ID},
                   {"version", F_VERSION},
                   {"vocab_size", F_VOCAB},
                   {"tokens", F_TOKENS},
                   {"special_tokens", F_SPECIAL},
                   {"byte_fallback_start", F_FB_START},
                   {"byte_fallback_end", F_FB_END},
                   {"published_at", F_PUBLISHED},
                   {"vocab", F_VOCABMAP},
                   {"encoder", F_ENCODER},
                   {"merges", F_MERGES},
                   {"pre_tokenizer_pattern", F_PATTERN},
                   {"pre_tokenizer_program", F_PROGRAM},
                   {"tool_calling", F_TOOL},
                   {"zstd_dictionaries", F_ZSTD}};
      unsigned bit = 0;
      const char *name = nullptr;
      for (const auto &k : known)
        if (key == k.name) bit = k.bit, name = k.name;
      if (!bit)
        return embd_fail(err, EMBD_ERR_MAP_SCHEMA, kat,
                    "\"%.*s\": not a field of tokenizer map schema v0.1 or v2.1 (map byte %zu)",
                    static_cast<int>(key.size() < 40 ? key.size() : 40), key.data(), kat);
      if (seen & bit)
        return embd_fail(err, EMBD_ERR_MAP_SCHEMA, kat, "%s: field appears twice (map byte %zu)", name, kat);
      seen |= bit;
      for (unsigned b = 0; b < 15; b++)
        if (bit == (1u << b)) at_field[b] = kat;
      embd_result r = EMBD_OK;
      switch (bit) {
        case F_ID: r = str_field(w.v, "id", kat, &m->id_off); break;
        case F_VERSION: r = str_field(w.v, "version", kat, &m->version_off); break;
        case F_PUBLISHED: r = str_field(w.v, "published_at", kat, &m->published_off); break;
        case F_VOCAB: at_vocab = kat; r = uint_field(w.v, "vocab_size", kat, &vocab); break;
        case F_FB_START: at_fb = kat; r = uint_field(w.v, "byte_fallback_start", kat, &fb_start); break;
        case F_FB_END: r = uint_field(w.v, "byte_fallback_end", kat, &fb_end); break;
        case F_TOKENS: r = tokens(w.v, kat); break;
        case F_SPECIAL: r = special_tokens(w.v, kat); break;
        case F_VOCABMAP: r = vocab_obj(w.v, kat); break;
        case F_ENCODER: r = encoder_field(w.v, kat); break;
        case F_MERGES: r = merges_arr(w.v, kat); break;
        case F_PATTERN: r = pattern_field(w.v, kat); break;
        case F_PROGRAM: r = program(w.v, kat); break;
        case F_TOOL: r = tool_calling(w.v, kat); break;
        case F_ZSTD: r = zstd(w.v, kat); break;
      }
      if (r) return r;
    }
    return w.r;
  }

  // The name of entry e in messages: tokens["<id>"] (v0.1) or vocab["<token>"] (v2).
  const char *ename(const ent &e, char out[64]) const {
    if (!v2) {
      snprintf(out, 64, "tokens[\"%u\"]", e.id);
      return out;
    }
    char sh[48];
    snprintf(out, 64, "vocab[\"%s\"]", show(m->arena + e.off, e.len, sh));
    return out;
  }
  bool v2 = false;

  embd_result check() {
    static const struct {
      unsigned bit;
      const char *name;
    } required[] = {{F_ID, "id"}, {F_VERSION, "version"}, {F_VOCAB, "vocab_size"}};
    if (!(seen & (F_TOKENS | F_VOCABMAP)))
      return embd_fail(err, EMBD_ERR_MAP_SCHEMA, 0,
                       "tokens: required field missing (schema v0.1; a schema v2 map has \"vocab\" instead)");
    v2 = (seen & F_VOCABMAP) != 0;
    if (v2 && (seen & F_TOKENS)) {
      size_t at = at_of(F_TOKENS);
      return embd_fail(err, EMBD_ERR_MAP_SCHEMA, at,
                       "\"tokens\": not a field of tokenizer map schema v2 (the map has \"vocab\"; "
                       "\"tokens\" is schema v0.1's) (map byte %zu)", at);
    }
    if (!v2)
      for (unsigned b = 0; b < 15; b++) {
        unsigned bit = 1u << b;
        if (!(seen & bit & F_V2_ONLY)) continue;
        static const char *const v2names[] = {"vocab", "encoder", "merges", "pre_tokenizer_pattern",
                                              "pre_tokenizer_program", "tool_calling", "zstd_dictionaries"};
        size_t at = at_field[b];
        return embd_fail(err, EMBD_ERR_MAP_SCHEMA, at,
                         "\"%s\": not a field of tokenizer map schema v0.1 (the map has \"tokens\"; "
                         "\"%s\" is schema v2's) (map byte %zu)",
                         v2names[b - 8], v2names[b - 8], at);
      }
    for (const auto &q : required)
      if (!(seen & q.bit))
        return embd_fail(err, EMBD_ERR_MAP_SCHEMA, 0, "%s: required field missing", q.name);
    if (vocab < 1 || vocab > UINT64_C(0x100000000))
      return embd_fail(err, EMBD_ERR_MAP_SCHEMA, at_vocab,
                  "vocab_size: %llu outside 1..4294967296 (map byte %zu)",
                  static_cast<unsigned long long>(vocab), at_vocab);
    m->vocab_size = vocab;
    m->schema = 1;
    if (v2) {
      // v2 (the reference loaders: "id must be a non-empty string", version "2"): the
      // version names the schema, not the map ("2"; "2.1" read as its additive successor).
      const char *ver = m->arena + m->version_off;
      if (!m->arena[m->id_off])
        return embd_fail(err, EMBD_ERR_MAP_SCHEMA, at_of(F_ID), "id: empty (map byte %zu)", at_of(F_ID));
      if (strcmp(ver, "2") != 0 && strcmp(ver, "2.1") != 0) {
        char sh[48];
        return embd_fail(err, EMBD_ERR_MAP_SCHEMA, at_of(F_VERSION),
                         "version: \"%s\" is not a schema v2 version (\"2\" or \"2.1\"), in a map with "
                         "\"vocab\" (map byte %zu)",
                         show(ver, strlen(ver), sh), at_of(F_VERSION));
      }
      m->schema = (!strcmp(ver, "2.1") || (seen & (F_PROGRAM | F_TOOL))) ? 21 : 20;
      m->encoder = encoder;
    }
    if ((seen & F_FB_START) && !(seen & F_FB_END))
      return embd_fail(err, EMBD_ERR_MAP_SCHEMA, at_fb,
                  "byte_fallback_end: required when byte_fallback_start is present");
    if ((seen & F_FB_END) && !(seen & F_FB_START))
      return embd_fail(err, EMBD_ERR_MAP_SCHEMA, 0,
                  "byte_fallback_start: required when byte_fallback_end is present");
    if (seen & F_FB_START) {
      if (fb_end < fb_start)
        return embd_fail(err, EMBD_ERR_MAP_SCHEMA, at_fb,
                    "byte_fallback_end: %llu < byte_fallback_start %llu (map byte %zu)",
                    static_cast<unsigned long long>(fb_end), static_cast<unsigned long long>(fb_start), at_fb);
      if (fb_end >= vocab)
        return embd_fail(err, EMBD_ERR_MAP_SCHEMA, at_fb,
                    "byte_fallback_end: id %llu >= vocab_size %llu (map byte %zu)",
                    static_cast<unsigned long long>(fb_end), static_cast<unsigned long long>(vocab), at_fb);
      if (fb_end - fb_start > 255)
        return embd_fail(err, EMBD_ERR_MAP_SCHEMA, at_fb,
                    "byte_fallback_start..byte_fallback_end: %llu ids, more than the 256 byte "
                    "values (map byte %zu)",
                    static_cast<unsigned long long>(fb_end - fb_start + 1), at_fb);
      m->has_fallback = 1;
      m->fb_start = static_cast<uint32_t>(fb_start);
      m->fb_end = static_cast<uint32_t>(fb_end);
    }
    // ids below vocab_size, unique; byte-fallback ids spelled "<0xHH>" name their byte.
    char en[64];
    for (size_t i = 0; i < nents; i++) {
      const ent &e = ents[i];
      if (e.id >= vocab)
        return embd_fail(err, EMBD_ERR_MAP_SCHEMA, e.at, "%s: id %u >= vocab_size %llu (map byte %u)",
                    ename(e, en), e.id, static_cast<unsigned long long>(vocab), e.at);
      if (m->has_fallback && e.id >= m->fb_start && e.id <= m->fb_end) {
        int hb = byte_token(m->arena + e.off, e.len);
        if (hb >= 0 && static_cast<uint32_t>(hb) != e.id - m->fb_start)
          return embd_fail(err, EMBD_ERR_MAP_SCHEMA, e.at,
                      "%s: byte-fallback id %u is byte 0x%02X, not %.6s (map byte %u)",
                      ename(e, en), e.id, e.id - m->fb_start, m->arena + e.off, e.at);
      }
    }
    if (nents > 1) qsort(ents, nents, sizeof *ents, cmp_ent); /* qsort(NULL, 0): UB */
    for (size_t i = 1; i < nents; i++)
      if (ents[i].id == ents[i - 1].id) {
        const ent &later = ents[i].at > ents[i - 1].at ? ents[i] : ents[i - 1];
        return embd_fail(err, EMBD_ERR_MAP_SCHEMA, later.at, "%s: id appears twice (id %u; map byte %u)",
                    ename(later, en), later.id, later.at);
      }
    for (size_t i = 0; i < nspecs; i++) {
      const spec &sp = specs[i];
      const char *nm = m->arena + sp.name_off;
      const char *more = sp.name_len > 40 ? "..." : "";
      if (sp.id >= vocab)
        return embd_fail(err, EMBD_ERR_MAP_SCHEMA, sp.at,
                    "special_tokens[\"%.40s%s\"]: id %u >= vocab_size %llu (map byte %u)", nm, more,
                    sp.id, static_cast<unsigned long long>(vocab), sp.at);
      if (m->has_fallback && sp.id >= m->fb_start && sp.id <= m->fb_end)
        return embd_fail(err, EMBD_ERR_MAP_SCHEMA, sp.at,
                    "special_tokens[\"%.40s%s\"]: id %u lies in the byte-fallback range %u..%u "
                    "(map byte %u)",
                    nm, more, sp.id, m->fb_start, m->fb_end, sp.at);
      for (size_t j = 0; j < i; j++)
        if (specs[j].name_len == sp.name_len && !memcmp(m->arena + specs[j].name_off, nm, sp.name_len))
          return embd_fail(err, EMBD_ERR_MAP_SCHEMA, sp.at,
                      "special_tokens[\"%.40s%s\"]: name appears twice (map byte %u)", nm, more, sp.at);
    }
    if (v2) {
      if (embd_result r = check_v2()) return r;
    }
    return EMBD_OK;
  }

  // v2: unique token strings, merges over the vocab, tool_calling markers; then the keys
  // are decoded in place (the decoded bytes never outgrow the key).
  embd_result check_v2() {
    // The vocab's strings in a hash set (ids of ents + 1): duplicate keys, then the merges'
    // tokens looked up in it (a sorted index would cost a cache miss per comparison).
    strset keys;
    if (!keys.init(nents)) return embd_fail(err, EMBD_ERR_OUT_OF_MEMORY, 0, "out of memory for the vocab index");
    char en[64];
    for (size_t i = 0; i < nents; i++) {
      const ent &e = ents[i];
      uint32_t other;
      if (!keys.add(m->arena, e.off, e.len, static_cast<uint32_t>(i), &other, ents_key, this)) {
        const ent &later = e.at > ents[other].at ? e : ents[other];
        return embd_fail(err, EMBD_ERR_MAP_SCHEMA, later.at, "%s: token string appears twice (map byte %u)",
                         ename(later, en), later.at);
      }
    }
    // merges (HF tokenizers' rule): "left right", one space, left, right and left+right all
    // tokens of the vocab; no merge twice.
    strset seen_m;
    if (nmrgs && !seen_m.init(nmrgs)) return embd_fail(err, EMBD_ERR_OUT_OF_MEMORY, 0, "out of memory for the merges");
    char cat[512];
    for (size_t i = 0; i < nmrgs; i++) {
      const mrg &g = mrgs[i];
      const char *str = m->arena + g.off;
      const char *sp = static_cast<const char *>(memchr(str, ' ', g.len));
      char sh[48];
      if (!sp || sp == str || sp == str + g.len - 1 || memchr(sp + 1, ' ', g.len - (sp + 1 - str)))
        return embd_fail(err, EMBD_ERR_MAP_SCHEMA, g.at,
                         "merges[%zu]: \"%s\" is not two tokens separated by one space (map byte %u)", i,
                         show(str, g.len, sh), g.at);
      size_t ll = static_cast<size_t>(sp - str), rl = g.len - ll - 1, cl = ll + rl;
      char *cb = cl <= sizeof cat ? cat : static_cast<char *>(malloc(cl));
      if (!cb) return embd_fail(err, EMBD_ERR_OUT_OF_MEMORY, g.at, "out of memory for the merges");
      memcpy(cb, str, ll);
      memcpy(cb + ll, sp + 1, rl);
      const char *ps[3] = {str, sp + 1, cb};
      size_t pl[3] = {ll, rl, cl};
      static const char *const role[] = {"left token", "right token", "merged token"};
      for (int k = 0; k < 3; k++)
        if (!keys.has(ps[k], pl[k], ents_key, this)) {
          embd_result r = embd_fail(err, EMBD_ERR_MAP_SCHEMA, g.at, "merges[%zu]: %s \"%s\" is not in vocab (map byte %u)",
                                    i, role[k], show(ps[k], pl[k], sh), g.at);
          if (cb != cat) free(cb);
          return r;
        }
      if (cb != cat) free(cb);
      uint32_t first;
      if (!seen_m.add(m->arena, g.off, g.len, static_cast<uint32_t>(i), &first, mrgs_key, this))
        return embd_fail(err, EMBD_ERR_MAP_SCHEMA, g.at, "merges[%zu]: \"%s\" is merges[%u] again (map byte %u)", i,
                         show(str, g.len, sh), first, g.at);
    }
    for (int k = 0; k < 2 && (seen & F_TOOL); k++) {
      bool found = false;
      for (size_t i = 0; i < nspecs && !found; i++)
        found = specs[i].name_len == mark_len[k] &&
                !memcmp(m->arena + specs[i].name_off, m->arena + mark_off[k], mark_len[k]);
      if (!found) {
        char sh[48];
        return embd_fail(err, EMBD_ERR_MAP_SCHEMA, mark_at[k],
                         "tool_calling.markers.%s: \"%s\" is not a key of special_tokens (map byte %zu)",
                         k ? "end" : "start", show(m->arena + mark_off[k], mark_len[k], sh), mark_at[k]);
      }
    }
    return EMBD_OK;
  }

  uint32_t *spec_ids = nullptr;  // the special ids, sorted (decode() leaves them alone)
  bool is_special(uint32_t id) const {
    size_t lo = 0, hi = nspecs;
    while (lo < hi) {
      size_t mid = lo + (hi - lo) / 2;
      if (spec_ids[mid] < id) lo = mid + 1;
      else hi = mid;
    }
    return lo < nspecs && spec_ids[lo] == id;
  }

  // Decodes v2 vocab key e in place; its flags (EMBD_TOK_RAW, EMBD_TOK_BYTE) in *flags.
  // Special tokens keep their string as written (HF renders added tokens verbatim).
  void decode(ent &e, uint32_t *flags) {
    *flags = 0;
    if (is_special(e.id)) return;
    char *s = m->arena + e.off;
    if (encoder != EMBD_TOKMAP_ENCODER_BYTE_LEVEL) {
      int hb = byte_token(s, e.len);
      if (hb >= 0) {  // SentencePiece byte fallback "<0xHH>": the byte (HF's ByteFallback)
        s[0] = static_cast<char>(hb);
        e.len = 1;
        *flags = EMBD_TOK_RAW | EMBD_TOK_BYTE;
        return;
      }
      if (encoder == EMBD_TOKMAP_ENCODER_METASPACE) {  // U+2581 (E2 96 81) -> ' '
        uint32_t w = 0;
        for (uint32_t r = 0; r < e.len;) {
          if (r + 2 < e.len && static_cast<unsigned char>(s[r]) == 0xE2 &&
              static_cast<unsigned char>(s[r + 1]) == 0x96 && static_cast<unsigned char>(s[r + 2]) == 0x81) {
            s[w++] = ' ';
            r += 3;
          } else {
            s[w++] = s[r++];
          }
        }
        e.len = w;
        s[w] = 0;
      }
      return;
    }
    // byte_level: each code point of the GPT-2 alphabet is its byte; any other code point
    // stays as its UTF-8 (what the reference decoders do, e.g. an added token's text).
    uint32_t w = 0;
    for (uint32_t r = 0; r < e.len;) {
      unsigned char c = static_cast<unsigned char>(s[r]);
      uint32_t n = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;  // valid UTF-8 (checked)
      uint32_t cp = n == 1 ? c : n == 2 ? (c & 0x1Fu) : n == 3 ? (c & 0x0Fu) : (c & 0x07u);
      for (uint32_t k = 1; k < n; k++) cp = cp << 6 | (static_cast<unsigned char>(s[r + k]) & 0x3Fu);
      int b = gpt2_byte(cp);
      if (b >= 0) {
        s[w++] = static_cast<char>(b);
      } else {
        memmove(s + w, s + r, n);
        w += n;
      }
      r += n;
    }
    e.len = w;
    s[w] = 0;
    *flags = EMBD_TOK_RAW;
  }

  // toks (tokens + special ids without a token), the id index, specials.
  embd_result build() {
    size_t n = nents + nspecs;
    m->toks = static_cast<embd_tokmap_tok *>(malloc((n ? n : 1) * sizeof(embd_tokmap_tok)));
    m->specials = static_cast<embd_tokmap_special_entry *>(
        malloc((nspecs ? nspecs : 1) * sizeof(embd_tokmap_special_entry)));
    if (!m->toks || !m->specials) return embd_fail(err, EMBD_ERR_OUT_OF_MEMORY, 0, "out of memory for the map");
    spec_ids = static_cast<uint32_t *>(malloc((nspecs ? nspecs : 1) * sizeof(uint32_t)));
    if (!spec_ids) return embd_fail(err, EMBD_ERR_OUT_OF_MEMORY, 0, "out of memory for the map");
    for (size_t i = 0; i < nspecs; i++) spec_ids[i] = specs[i].id;
    if (nspecs > 1) qsort(spec_ids, nspecs, sizeof *spec_ids, cmp_u32);
    for (size_t i = 0; i < nents; i++) {
      uint32_t fl = 0;
      if (v2) decode(ents[i], &fl);
      m->toks[i] = embd_tokmap_tok{ents[i].id, ents[i].off, ents[i].len, fl};
    }
    m->ntoks = m->ntokens = nents;
    size_t cnt = nents;
    for (size_t i = 0; i < nspecs; i++) {
      m->specials[i] = embd_tokmap_special_entry{specs[i].name_off, specs[i].name_len, specs[i].id};
      // Flag its token, or give it one with its name as text (the sorted tokens: binary
      // search; the special-only ones appended after them: linear, specials are few).
      uint32_t id = specs[i].id;
      embd_tokmap_tok *hit = nullptr;
      size_t lo = 0, hi = nents;
      while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->toks[mid].id < id) lo = mid + 1;
        else hi = mid;
      }
      if (lo < nents && m->toks[lo].id == id) hit = &m->toks[lo];
      for (size_t j = nents; !hit && j < cnt; j++)
        if (m->toks[j].id == id) hit = &m->toks[j];
      if (hit) hit->flags = EMBD_TOK_SPECIAL;  // as written (decode() left it alone)
      else m->toks[cnt++] = embd_tokmap_tok{id, specs[i].name_off, specs[i].name_len, EMBD_TOK_SPECIAL};
    }
    m->ntoks = cnt;
    m->ntokens = nents;
    m->nspecials = nspecs;
    if (m->ntoks > 1) qsort(m->toks, m->ntoks, sizeof *m->toks, cmp_tok);
    m->max_len = 1;
    for (size_t i = 0; i < m->ntoks; i++) {
      if (m->toks[i].len > m->max_len) m->max_len = m->toks[i].len;
      if ((m->toks[i].flags & EMBD_TOK_RAW) && m->toks[i].len > m->max_raw_len)
        m->max_raw_len = m->toks[i].len;
    }
    // O(1) lookup: a dense id -> entry table unless the ids are very sparse (then a binary
    // search: a map of 5 tokens with vocab_size 2^32 must not cost 16 GiB).
    if (m->ntoks) {
      uint64_t top = static_cast<uint64_t>(m->toks[m->ntoks - 1].id) + 1;
      if (top <= 4 * static_cast<uint64_t>(m->ntoks) + 65536 && top <= SIZE_MAX / sizeof(uint32_t)) {
        m->dense = static_cast<uint32_t *>(calloc(static_cast<size_t>(top), sizeof(uint32_t)));
        if (!m->dense) return embd_fail(err, EMBD_ERR_OUT_OF_MEMORY, 0, "out of memory for the id index");
        m->ndense = static_cast<size_t>(top);
        for (size_t i = 0; i < m->ntoks; i++) m->dense[m->toks[i].id] = static_cast<uint32_t>(i + 1);
      }
    }
    return EMBD_OK;
  }
};

const char *ents_key(const void *ctx, uint32_t i, uint32_t *len) {
  const loader *L = static_cast<const loader *>(ctx);
  *len = L->ents[i].len;
  return L->m->arena + L->ents[i].off;
}
const char *mrgs_key(const void *ctx, uint32_t i, uint32_t *len) {
  const loader *L = static_cast<const loader *>(ctx);
  *len = L->mrgs[i].len;
  return L->m->arena + L->mrgs[i].off;
}

}  // namespace

extern "C" embd_result embd_tokmap_load(const char *json, size_t len, const char *expected_hash,
                                        embd_tokmap **out, embd_error *err) {
  if (out) *out = nullptr;
  if (!out || (!json && len))
    return embd_fail(err, EMBD_ERR_INVALID_ARGUMENT, 0, "NULL out, or NULL json with length %zu", len);
  char want[EMBD_TOKMAP_SHA256_SIZE];
  // the pin reader READY's map_hash goes through too (pin.h): one rule for what is accepted
  if (expected_hash && !embd_sha256_pin_norm_(expected_hash, strlen(expected_hash), want))
    return embd_fail(err, EMBD_ERR_INVALID_ARGUMENT, 0,
                "expected_hash is not \"sha256:\" or \"SHA256:\" and 64 hex digits");
  if (len > UINT32_MAX - 64)
    return embd_fail(err, EMBD_ERR_MAP_SCHEMA, 0, "map of %zu bytes: above the 4 GiB limit", len);
  embd_tokmap *m = static_cast<embd_tokmap *>(calloc(1, sizeof(embd_tokmap)));
  if (!m) return embd_fail(err, EMBD_ERR_OUT_OF_MEMORY, 0, "out of memory for the map");
  if (embd_result r = embd_tokmap_sha256(json, len, m->hash)) {
    embd_tokmap_free(m);
    return embd_fail(err, r, 0, "sha256 failed");
  }
  if (expected_hash && memcmp(want, m->hash, EMBD_TOKMAP_SHA256_SIZE) != 0) {
    embd_result r = embd_fail(err, EMBD_ERR_MAP_HASH, 0, "expected %s, got %s", want, m->hash);
    embd_tokmap_free(m);
    return r;
  }
  m->arena_len = len + 2;
  m->arena = static_cast<char *>(malloc(m->arena_len));
  if (!m->arena) {
    embd_tokmap_free(m);
    return embd_fail(err, EMBD_ERR_OUT_OF_MEMORY, 0, "out of memory for a %zu-byte map", len);
  }
  m->arena[0] = 0;
  embd_result r;
  {
    loader L;
    L.buf = json ? json : "";
    L.len = len;
    L.err = err;
    L.m = m;
    r = L.parse();
    if (!r) r = L.check();
    if (!r) r = L.build();
  }
  if (r) {
    embd_tokmap_free(m);
    return r;
  }
  embd_no_error(err);
  *out = m;
  return EMBD_OK;
}
