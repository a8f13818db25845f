#!/usr/bin/env python3
"""Writes the seed corpus fuzz/corpus/tokmap/: tokenizer maps behind fuzz_tokmap's selector
byte 0x00 (tests/data/tokmap-small.json, small valid maps, one broken map per schema rule)
and id streams behind odd selectors (byte-fallback UTF-8 split across feeds, specials,
unknown ids). Deterministic; run from anywhere:  python3 fuzz/gen_tokmap_corpus.py
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
    for name, data in files.items():
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(data)
    print("wrote %d files to %s" % (len(files), OUT))


if __name__ == "__main__":
    main()
