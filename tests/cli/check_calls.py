#!/usr/bin/env python3
"""The command-line tool's files call one another in layers, never in a circle.

    check_calls.py NM OBJECT...

Reads each object file's defined and undefined symbols with NM (the embd target's
objects, one per cli/*.c), draws an edge A -> B where A uses a symbol that B defines, and
fails on every group of files that reach one another (a strongly connected component of
more than one file), naming the symbols on each edge of it. Issue 31: cli/npy.c called
util.c's cli_escape while util.c called npy.c's npy_header_write_descr.
"""
import os
import subprocess
import sys


def symbols(nm, obj):
    out = subprocess.run([nm, obj], check=True, capture_output=True, text=True).stdout
    defined, used = set(), set()
    for line in out.splitlines():
        f = line.split()
        if len(f) == 3 and f[1] in "TDBRGSV":  # global text, data, bss, rodata, ...
            defined.add(f[2])
        elif len(f) == 2 and f[0] == "U":
            used.add(f[1])
    return defined, used


def components(graph):
    """Tarjan's strongly connected components."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    nm = sys.argv[1]
    # one argument per object, or one ;-separated list (a CMake $<TARGET_OBJECTS:...>)
    objs = [o for a in sys.argv[2:] for o in a.split(";") if o]
    name = {o: os.path.basename(o).replace(".c.o", ".c").replace(".o", "") for o in objs}
    defs, uses = {}, {}
    for o in objs:
        defs[o], uses[o] = symbols(nm, o)
    owner = {s: o for o in objs for s in defs[o]}
    edges = {o: {} for o in objs}
    for a in objs:
        for s in uses[a]:
            b = owner.get(s)
            if b and b != a:
                edges[a].setdefault(b, set()).add(s)
    graph = {a: set(edges[a]) for a in objs}
    bad = [c for c in components(graph) if len(c) > 1]
    for a in sorted(objs, key=name.get):
        print("%-16s -> %s" % (name[a], " ".join(sorted(name[b] for b in graph[a])) or "-"))
    if not bad:
        print("check_calls: %d files, no circle" % len(objs))
        return 0
    for c in bad:
        print("CIRCLE: %s" % ", ".join(name[o] for o in c))
        for a in c:
            for b in c:
                if b in edges[a]:
                    print("  %s -> %s: %s" % (name[a], name[b], " ".join(sorted(edges[a][b]))))
    return 1


if __name__ == "__main__":
    sys.exit(main())
