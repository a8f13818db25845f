// Codec tokenizer maps (schema v0.1) -> embd_tokmap (embd/tokmap.h).
//
// simdjson's on-demand API behind the C API, like src/json/openai.cc: -fno-exceptions (error
// codes), hidden visibility. One pass over the document collects the fields (they may come
// in any order); the checks that need several fields (ids against vocab_size, the
// byte-fallback range, duplicates) run after it. Every string the map keeps is copied into
// one arena; an unescaped JSON string plus a NUL never takes more bytes than its quoted
// source, so an arena of len + 2 bytes always suffices.
#include <simdjson.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "embd/codec.h"
#include "fail.h"
#include "json_strict.h"
#include "pin.h"
#include "tokmap_internal.h"

namespace {

using namespace simdjson;

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
  F_FB_END = 64, F_PUBLISHED = 128
};

struct loader {
  const char *buf;  // padded copy of the document
  size_t len;
  embd_error *err;
  embd_tokmap *m;
  ondemand::parser parser;
  ondemand::document doc;
  size_t arena_used = 1;  // arena[0] = "" (an absent published_at)
  ent *ents = nullptr;
  size_t nents = 0, ents_cap = 0;
  spec *specs = nullptr;
  size_t nspecs = 0, specs_cap = 0;
  unsigned seen = 0;
  uint64_t vocab = 0, fb_start = 0, fb_end = 0;
  size_t at_vocab = 0, at_fb = 0;

  ~loader() {
    free(ents);
    free(specs);
  }

  size_t off(const char *p) const {
    return (p >= buf && p <= buf + len) ? static_cast<size_t>(p - buf) : len;
  }
  size_t here() {
    const char *p = nullptr;
    if (doc.current_location().get(p)) return len;
    return off(p);
  }
  embd_result json_fail(error_code ec, const char *what) {
    size_t at = here();
    if (ec == MEMALLOC) return embd_fail(err, EMBD_ERR_OUT_OF_MEMORY, at, "out of memory parsing the map");
    if (ec == INCORRECT_TYPE)
      return embd_fail(err, EMBD_ERR_MAP_SCHEMA, at, "%s: wrong type (map byte %zu)", what, at);
    return embd_fail(err, EMBD_ERR_MAP_SCHEMA, at, "malformed JSON in %s: %s (map byte %zu)", what,
                error_message(ec), at);
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
  embd_result str_field(ondemand::value v, const char *what, size_t at, uint32_t *o) {
    std::string_view s;
    if (auto ec = v.get_string().get(s)) {
      if (ec == INCORRECT_TYPE)
        return embd_fail(err, EMBD_ERR_MAP_SCHEMA, at, "%s: not a string (map byte %zu)", what, at);
      return json_fail(ec, what);
    }
    if (!keep(s, o)) return arena_fail();
    return EMBD_OK;
  }

  // A non-negative integer (vocab_size, byte_fallback_*, special_tokens values).
  embd_result uint_field(ondemand::value v, const char *what, size_t at, uint64_t *u) {
    ondemand::json_type t;
    if (auto ec = v.type().get(t)) return json_fail(ec, what);
    if (t != ondemand::json_type::number)
      return embd_fail(err, EMBD_ERR_MAP_SCHEMA, at, "%s: not an integer (map byte %zu)", what, at);
    ondemand::number_type nt;
    if (auto ec = v.get_number_type().get(nt)) return json_fail(ec, what);
    if (nt == ondemand::number_type::signed_integer) {
      int64_t i;
      if (auto ec = v.get_int64().get(i)) return json_fail(ec, what);
      if (i < 0)
        return embd_fail(err, EMBD_ERR_MAP_SCHEMA, at, "%s: %lld is negative (map byte %zu)", what,
                    static_cast<long long>(i), at);
      *u = static_cast<uint64_t>(i);
      return EMBD_OK;
    }
    if (nt == ondemand::number_type::unsigned_integer) {
      if (auto ec = v.get_uint64().get(*u)) return json_fail(ec, what);
      return EMBD_OK;
    }
    return embd_fail(err, EMBD_ERR_MAP_SCHEMA, at, "%s: not an integer (map byte %zu)", what, at);
  }

  embd_result tokens(ondemand::value v, size_t at) {
    ondemand::object o;
    if (auto ec = v.get_object().get(o)) {
      if (ec == INCORRECT_TYPE)
        return embd_fail(err, EMBD_ERR_MAP_SCHEMA, at, "tokens: not an object (map byte %zu)", at);
      return json_fail(ec, "tokens");
    }
    for (auto fr : o) {
      ondemand::field f;
      if (auto ec = std::move(fr).get(f)) return json_fail(ec, "tokens");
      size_t kat = off(f.key().raw()) - 1;
      std::string_view key;
      if (auto ec = f.unescaped_key().get(key)) return json_fail(ec, "tokens");
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
      std::string_view s;
      if (auto ec = f.value().get_string().get(s)) {
        if (ec == INCORRECT_TYPE)
          return embd_fail(err, EMBD_ERR_MAP_SCHEMA, kat,
                      "tokens[\"%llu\"]: value is not a string (map byte %zu)",
                      static_cast<unsigned long long>(id), kat);
        size_t w = here();
        return embd_fail(err, EMBD_ERR_MAP_SCHEMA, w, "tokens[\"%llu\"]: malformed JSON string: %s (map byte %zu)",
                    static_cast<unsigned long long>(id), error_message(ec), w);
      }
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
    }
    return EMBD_OK;
  }

  embd_result special_tokens(ondemand::value v, size_t at) {
    ondemand::object o;
    if (auto ec = v.get_object().get(o)) {
      if (ec == INCORRECT_TYPE)
        return embd_fail(err, EMBD_ERR_MAP_SCHEMA, at, "special_tokens: not an object (map byte %zu)", at);
      return json_fail(ec, "special_tokens");
    }
    for (auto fr : o) {
      ondemand::field f;
      if (auto ec = std::move(fr).get(f)) return json_fail(ec, "special_tokens");
      size_t kat = off(f.key().raw()) - 1;
      std::string_view key;
      if (auto ec = f.unescaped_key().get(key)) return json_fail(ec, "special_tokens");
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
      if (embd_result r = uint_field(f.value(), what, kat, &id)) return r;
      if (id > UINT32_MAX)
        return embd_fail(err, EMBD_ERR_MAP_SCHEMA, kat, "%s: id %llu above 4294967295 (map byte %zu)",
                    what, static_cast<unsigned long long>(id), kat);
      sp.id = static_cast<uint32_t>(id);
      if (!push(&specs, &nspecs, &specs_cap, sp))
        return embd_fail(err, EMBD_ERR_OUT_OF_MEMORY, kat, "out of memory for the special tokens");
    }
    return EMBD_OK;
  }

  embd_result parse() {
    // The strict pass first: the on-demand walk below skips what it does not read and
    // reports its first stage's errors at byte 0; this names the fault and its byte.
    embd_json j;
    embd_json_init(&j, buf, len);
    if (embd_json_validate(&j, 0) != 0) {
      size_t at = embd_json_fault_offset(&j);
      return embd_fail(err, EMBD_ERR_MAP_SCHEMA, at, "malformed JSON: %s (map byte %zu)", j.fault, at);
    }
    if (auto ec = parser.iterate(buf, len, len + SIMDJSON_PADDING).get(doc)) {
      if (ec == MEMALLOC) return embd_fail(err, EMBD_ERR_OUT_OF_MEMORY, 0, "out of memory parsing the map");
      return embd_fail(err, EMBD_ERR_MAP_SCHEMA, 0, "malformed JSON: %s (map byte 0)", error_message(ec));
    }
    ondemand::object root;
    if (auto ec = doc.get_object().get(root)) {
      if (ec == INCORRECT_TYPE)
        return embd_fail(err, EMBD_ERR_MAP_SCHEMA, 0, "the map is not a JSON object (map byte 0)");
      return json_fail(ec, "the map");
    }
    for (auto fr : root) {
      ondemand::field f;
      if (auto ec = std::move(fr).get(f)) return json_fail(ec, "the map");
      size_t kat = off(f.key().raw()) - 1;
      std::string_view key;
      if (auto ec = f.unescaped_key().get(key)) return json_fail(ec, "the map");
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
                   {"published_at", F_PUBLISHED}};
      unsigned bit = 0;
      const char *name = nullptr;
      for (const auto &k : known)
        if (key == k.name) bit = k.bit, name = k.name;
      if (!bit)
        return embd_fail(err, EMBD_ERR_MAP_SCHEMA, kat,
                    "\"%.40s\": not a field of tokenizer map schema v0.1 (map byte %zu)",
                    std::string(key).c_str(), kat);
      if (seen & bit)
        return embd_fail(err, EMBD_ERR_MAP_SCHEMA, kat, "%s: field appears twice (map byte %zu)", name, kat);
      seen |= bit;
      embd_result r = EMBD_OK;
      switch (bit) {
        case F_ID: r = str_field(f.value(), "id", kat, &m->id_off); break;
        case F_VERSION: r = str_field(f.value(), "version", kat, &m->version_off); break;
        case F_PUBLISHED: r = str_field(f.value(), "published_at", kat, &m->published_off); break;
        case F_VOCAB: at_vocab = kat; r = uint_field(f.value(), "vocab_size", kat, &vocab); break;
        case F_FB_START: at_fb = kat; r = uint_field(f.value(), "byte_fallback_start", kat, &fb_start); break;
        case F_FB_END: r = uint_field(f.value(), "byte_fallback_end", kat, &fb_end); break;
        case F_TOKENS: r = tokens(f.value(), kat); break;
        case F_SPECIAL: r = special_tokens(f.value(), kat); break;
      }
      if (r) return r;
    }
    const char *rest = nullptr;
    if (!doc.current_location().get(rest)) {
      size_t w = off(rest);
      return embd_fail(err, EMBD_ERR_MAP_SCHEMA, w, "malformed JSON: content after the map's object (map byte %zu)", w);
    }
    return EMBD_OK;
  }

  embd_result check() {
    static const struct {
      unsigned bit;
      const char *name;
    } required[] = {{F_ID, "id"}, {F_VERSION, "version"}, {F_VOCAB, "vocab_size"}, {F_TOKENS, "tokens"}};
    for (const auto &q : required)
      if (!(seen & q.bit))
        return embd_fail(err, EMBD_ERR_MAP_SCHEMA, 0, "%s: required field missing", q.name);
    if (vocab < 1 || vocab > UINT64_C(0x100000000))
      return embd_fail(err, EMBD_ERR_MAP_SCHEMA, at_vocab,
                  "vocab_size: %llu outside 1..4294967296 (map byte %zu)",
                  static_cast<unsigned long long>(vocab), at_vocab);
    m->vocab_size = vocab;
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
    // tokens: ids below vocab_size, unique; byte-fallback ids spelled "<0xHH>" name their byte.
    for (size_t i = 0; i < nents; i++) {
      const ent &e = ents[i];
      if (e.id >= vocab)
        return embd_fail(err, EMBD_ERR_MAP_SCHEMA, e.at, "tokens[\"%u\"]: id %u >= vocab_size %llu (map byte %u)",
                    e.id, e.id, static_cast<unsigned long long>(vocab), e.at);
      if (m->has_fallback && e.id >= m->fb_start && e.id <= m->fb_end && e.len == 6) {
        const char *s = m->arena + e.off;
        int h = hexval(s[3]), l = hexval(s[4]);
        if (s[0] == '<' && s[1] == '0' && s[2] == 'x' && h >= 0 && l >= 0 && s[5] == '>' &&
            static_cast<uint32_t>(h * 16 + l) != e.id - m->fb_start)
          return embd_fail(err, EMBD_ERR_MAP_SCHEMA, e.at,
                      "tokens[\"%u\"]: byte-fallback id %u is byte 0x%02X, not %.6s (map byte %u)",
                      e.id, e.id, e.id - m->fb_start, s, e.at);
      }
    }
    if (nents > 1) qsort(ents, nents, sizeof *ents, cmp_ent); /* qsort(NULL, 0): UB */
    for (size_t i = 1; i < nents; i++)
      if (ents[i].id == ents[i - 1].id) {
        uint32_t a = ents[i].at > ents[i - 1].at ? ents[i].at : ents[i - 1].at;
        return embd_fail(err, EMBD_ERR_MAP_SCHEMA, a, "tokens[\"%u\"]: id appears twice (map byte %u)",
                    ents[i].id, a);
      }
    for (size_t i = 0; i < nspecs; i++) {
      const spec &s = specs[i];
      const char *nm = m->arena + s.name_off;
      const char *more = s.name_len > 40 ? "..." : "";
      if (s.id >= vocab)
        return embd_fail(err, EMBD_ERR_MAP_SCHEMA, s.at,
                    "special_tokens[\"%.40s%s\"]: id %u >= vocab_size %llu (map byte %u)", nm, more,
                    s.id, static_cast<unsigned long long>(vocab), s.at);
      if (m->has_fallback && s.id >= m->fb_start && s.id <= m->fb_end)
        return embd_fail(err, EMBD_ERR_MAP_SCHEMA, s.at,
                    "special_tokens[\"%.40s%s\"]: id %u lies in the byte-fallback range %u..%u "
                    "(map byte %u)",
                    nm, more, s.id, m->fb_start, m->fb_end, s.at);
      for (size_t j = 0; j < i; j++)
        if (specs[j].name_len == s.name_len && !memcmp(m->arena + specs[j].name_off, nm, s.name_len))
          return embd_fail(err, EMBD_ERR_MAP_SCHEMA, s.at,
                      "special_tokens[\"%.40s%s\"]: name appears twice (map byte %u)", nm, more, s.at);
    }
    return EMBD_OK;
  }

  // toks (tokens + special ids without a token), the id index, specials.
  embd_result build() {
    size_t n = nents + nspecs;
    m->toks = static_cast<embd_tokmap_tok *>(malloc((n ? n : 1) * sizeof(embd_tokmap_tok)));
    m->specials = static_cast<embd_tokmap_special_entry *>(
        malloc((nspecs ? nspecs : 1) * sizeof(embd_tokmap_special_entry)));
    if (!m->toks || !m->specials) return embd_fail(err, EMBD_ERR_OUT_OF_MEMORY, 0, "out of memory for the map");
    for (size_t i = 0; i < nents; i++)
      m->toks[i] = embd_tokmap_tok{ents[i].id, ents[i].off, ents[i].len, 0};
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
      if (hit) hit->flags |= EMBD_TOK_SPECIAL;
      else m->toks[cnt++] = embd_tokmap_tok{id, specs[i].name_off, specs[i].name_len, EMBD_TOK_SPECIAL};
    }
    m->ntoks = cnt;
    m->ntokens = nents;
    m->nspecials = nspecs;
    if (m->ntoks > 1) qsort(m->toks, m->ntoks, sizeof *m->toks, cmp_tok);
    m->max_len = 1;
    for (size_t i = 0; i < m->ntoks; i++)
      if (m->toks[i].len > m->max_len) m->max_len = m->toks[i].len;
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
    return embd_fail(err, r, 0, "sha256 failed (libcrypto)");
  }
  if (expected_hash && memcmp(want, m->hash, EMBD_TOKMAP_SHA256_SIZE) != 0) {
    embd_result r = embd_fail(err, EMBD_ERR_MAP_HASH, 0, "expected %s, got %s", want, m->hash);
    embd_tokmap_free(m);
    return r;
  }
  m->arena_len = len + 2;
  m->arena = static_cast<char *>(malloc(m->arena_len));
  char *padded = static_cast<char *>(malloc(len + SIMDJSON_PADDING));
  if (!m->arena || !padded) {
    free(padded);
    embd_tokmap_free(m);
    return embd_fail(err, EMBD_ERR_OUT_OF_MEMORY, 0, "out of memory for a %zu-byte map", len);
  }
  m->arena[0] = 0;
  if (len) memcpy(padded, json, len);
  memset(padded + len, 0, SIMDJSON_PADDING);
  embd_result r;
  {
    loader L;
    L.buf = padded;
    L.len = len;
    L.err = err;
    L.m = m;
    r = L.parse();
    if (!r) r = L.check();
    if (!r) r = L.build();
  }
  free(padded);
  if (r) {
    embd_tokmap_free(m);
    return r;
  }
  if (err) {
    err->result = EMBD_OK;
    err->offset = 0;
    err->message[0] = 0;
  }
  *out = m;
  return EMBD_OK;
}
