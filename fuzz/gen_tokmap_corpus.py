#!/usr/bin/env python3
"""Writes the seed corpus fuzz/corpus/tokmap/: tokenizer maps behind fuzz_tokmap's selector
byte 0x00 (tests/data/tokmap-small.json, small valid maps of schema v0.1 and v2 / v2.1, one
broken map per schema rule), id streams behind odd selectors (byte-fallback UTF-8 split
across feeds, specials, unknown ids) and behind selector bit 3 (the fixed v2 byte_level
map: raw-byte tokens completing or breaking UTF-8 sequences across feeds). The v2 maps are
built here from the rules (the GPT-2 byte alphabet as its definition states it).
Deterministic; run from anywhere:  python3 fuzz/gen_tokmap_corpus.py
"""
import json
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "corpus", "tokmap")
SMALL = os.path.join(HERE, "..", "tests", "data", "tokmap-small.json")


def m(**kw):
    d = {"id": "x", "version": "1", "vocab_size": 8,
         "tokens": {"0": "a", "1": "\u00e9", "2": "\U0001F600", "3": "<0x00>"}}
    d.update(kw)
    return {k: v for k, v in d.items() if v is not None}


MAPS = {
    "ok-min": m(),
    "ok-fallback": m(byte_fallback_start=3, byte_fallback_end=7, special_tokens={"eos": 0}),
    "ok-sparse": m(vocab_size=4294967296, tokens={"4294967295": "top", "0": "z"}),
    "bad-missing-id": m(id=None),
    "bad-vocab-type": m(vocab_size="8"),
    "bad-id-range": m(tokens={"9": "x"}),
    "bad-key": m(tokens={"01": "x"}),
    "bad-special": m(special_tokens={"eos": 8}),
    "bad-fallback": m(byte_fallback_start=3),
    "bad-fallback-order": m(byte_fallback_start=5, byte_fallback_end=4),
    "bad-extra": m(merges=[]),
}


def gpt2_alphabet():
    """bytes_to_unicode: printable bytes are themselves, the rest (in order) from U+0100."""
    self_ = set(range(33, 127)) | set(range(161, 173)) | set(range(174, 256))
    out, nxt = {}, 256
    for b in range(256):
        if b in self_:
            out[b] = chr(b)
        else:
            out[b] = chr(nxt)
            nxt += 1
    return out


G2 = gpt2_alphabet()


def bl(bs):
    return "".join(G2[b] for b in bs)


def m2(**kw):
    d = {"id": "x", "version": "2", "vocab_size": 16, "encoder": "byte_level",
         "vocab": {bl(b"a"): 0, bl(b" "): 1, bl(b" a"): 2, bl("\u00e9".encode()[:1]): 3,
                   bl("\u00e9".encode()[1:]): 4, bl("\U0001F600".encode()[:3]): 5,
                   bl(b"\x80"): 6, "<|eot|>": 7},
         "merges": [bl(b" ") + " " + bl(b"a")],
         "special_tokens": {"<|eot|>": 7, "<s>": 15}}
    d.update(kw)
    return {k: v for k, v in d.items() if v is not None}


PROGRAM = {"version": 1, "ops": [
    {"op": "literals_ci", "patterns": ["'s", "'t"]}, {"op": "letters", "lead_other": True},
    {"op": "numbers", "max_run": 3}, {"op": "punct_run", "lead_space": True, "trailing_newlines": True},
    {"op": "newline_block"}, {"op": "trailing_ws"}, {"op": "ws_run"}]}
TOOL = {"convention": "qwen25", "markers": {"start": "<s>", "end": "<|eot|>"},
        "args_format": "json", "result_format": "text"}
DICT = {"format": "msgpack", "url": "https://x/d.dict", "hash": "sha256:" + "ab" * 32, "size_bytes": 64}

MAPS2 = {
    "v2-byte-level": m2(),
    "v2-full": m2(version="2.1", pre_tokenizer_pattern=" ?\\p{L}+|\\s+", pre_tokenizer_program=PROGRAM,
                  tool_calling=TOOL, zstd_dictionaries=[DICT, dict(DICT, format="protobuf")],
                  byte_fallback_start=8, byte_fallback_end=9, published_at="2026-05-06T00:00:00Z"),
    "v2-metaspace": m2(encoder="metaspace", vocab={"\u2581a": 0, "<0xC3>": 3, "<0xA9>": 4, "\u2581": 5, "<s>": 15},
                       merges=None),
    "v2-plain": m2(encoder=None, merges=None, vocab={" the": 0, "<0xE2>": 1, "\u00e9": 2}),
    "v2-program-null": m2(pre_tokenizer_program=None),
    "v2-program-stages": m2(pre_tokenizer_program={"version": 2, "stages": [
        {"stage": "digits_isolate", "mode": "grouped", "max_run": 3}, {"stage": "cjk_isolate"},
        {"stage": "alternation", "ops": [
            {"op": "punct_ascii_letters"},
            {"op": "letters", "lead_other": True, "lead_other_class": "l_p_s", "body": "L_M"},
            {"op": "letters_cased", "kind": "upper", "trailing_ci": ["'s"]},
            {"op": "punct_run", "charset": "p_s", "trailing_chars": "\r\n"},
            {"op": "newline_block"}, {"op": "trailing_ws"}, {"op": "ws_run"}]}]}),
    "bad-v2-tokens-too": m2(tokens={"0": "a"}),
    "bad-v2-version": m2(version="1.0.0"),
    "bad-v2-encoder": m2(encoder="bpe"),
    "bad-v2-dup-id": m2(vocab={"a": 0, "b": 0}),
    "bad-v2-merge": m2(merges=["a z"]),
    "bad-v2-merge-form": m2(merges=["a"]),
    "bad-v2-program": m2(pre_tokenizer_program={"version": 1, "ops": [{"op": "numbers", "max_run": -1}]}),
    "bad-v2-program-v2": m2(pre_tokenizer_program={"version": 2, "stages": [{"stage": "alternation"}]}),
    "bad-v2-program-meta": m2(pre_tokenizer_program={"version": 1, "ops": [{"op": "metaspace_split"}, {"op": "ws_run"}]}),
    "bad-v2-tool": m2(tool_calling=dict(TOOL, markers={"start": "<x>", "end": "<s>"})),
    "bad-v2-dict": m2(zstd_dictionaries=[DICT, DICT]),
    "bad-v2-fallback": m2(vocab={"<0x05>": 8, "a": 0}, encoder="metaspace", merges=None,
                          byte_fallback_start=8, byte_fallback_end=9),
}


def ids(seq):
    return b"".join(struct.pack(">I", i) for i in seq)


def main():
    os.makedirs(OUT, exist_ok=True)
    with open(SMALL, "rb") as f:
        small = f.read()
    files = {"map-small": b"\x00" + small, "map-small-trunc": b"\x00" + small[:len(small) // 2]}
    for name, d in MAPS.items():
        files["map-" + name] = b"\x00" + json.dumps(d).encode()
    files["map-lone-surrogate"] = b"\x00" + b'{"id":"x","version":"1","vocab_size":2,"tokens":{"0":"\\ud800"}}'
    fb = 3
    emoji = [fb + b for b in "\U0001F600".encode()]
    files["ids-emoji-chunk1"] = bytes([0x01 | 0x08 | 0x00]) + ids([259] + emoji + [261])
    files["ids-emoji-chunk3"] = bytes([0x01 | 0x08 | 0x20]) + ids([1] + emoji + emoji[:2] + [299])
    files["ids-broken"] = bytes([0x01]) + ids([fb + 0xF0, fb + 0x9F, 259, fb + 0xED, fb + 0xA0, fb + 0x80])
    files["ids-unknown"] = bytes([0x05]) + ids([259, 297, 300, 0xFFFFFFFF, 260])
    files["ids-skip-special"] = bytes([0x0D]) + ids([1, 259, 299, 263])
    # EMBD_DETOK_REPLACE_UNKNOWN (bit 7; with SKIP_SPECIAL bit 2: the reference defaults):
    # unknown ids between byte-fallback bytes, in feeds of 2 (bits 4-6 = 1), partial mode
    files["ids-replace-unknown"] = bytes([0x81 | 0x08 | 0x10]) + ids([259, fb + 0xE2, 297, fb + 0x82, 300, 0xFFFFFFFF])
    files["ids-reference"] = bytes([0x81 | 0x04 | 0x08]) + ids([1, 259, 297, 299, fb + 0xF0, fb + 0x9F, 0xFFFFFFFF])
    files["map-small-replace-unknown"] = b"\x04" + small
    for name, d in MAPS2.items():
        # the JSON as UTF-8 (the v2 keys are the alphabet's code points, not \u escapes)
        files["map-" + name] = b"\x00" + json.dumps(d, ensure_ascii=False).encode()
    # the fixed v2 byte_level map (selector bit 3): 260 = F0 9F 98 80 split over feeds of 1
    # (bits 4-6 = 0), the halves of U+00E9 (261, 262) around a special, broken sequences
    files["ids-v2-emoji"] = bytes([0x08]) + ids([259, 260, 261, 262, 266, 263])
    files["ids-v2-broken"] = bytes([0x08 | 0x30]) + ids([261, 0, fb + 0xF0, 260, 265, 261, 299, 264, 267])
    files["ids-v2-reference"] = bytes([0x08 | 0x02 | 0x04 | 0x10]) + ids([261, 300, 262, 266, 319, fb + 0xE6, 263])
    for name, data in files.items():
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(data)
    print("wrote %d files to %s" % (len(files), OUT))


if __name__ == "__main__":
    main()
