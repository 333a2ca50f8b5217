"""Side by side: results of bench/matmul_variants_replay.py (native) and bench/gpu/dawn_matmul.mjs
(Dawn, with and without robustness) on the same export: per (shape, variant) each runner's ms
and its time over the first file's (> 1: slower than it), then the geometric means of those per
shape class and over all cases, and each runner's CPU time encoding a dispatch.

    python3 bench/matmul_variants_compare.py native.json dawn.json [dawn-norobust.json ...] [--out FILE]
"""

import argparse
import json
import math
import os


def label(doc, path):
    if doc.get("runner") == "dawn":
        # the toggles asked for name it: the probe can read "unclear" on a real GPU (a read past
        # a binding that happens to return 0), which made both Dawn runs one column
        flags = " ".join((doc.get("adapter") or {}).get("flags", []))
        return "dawn(no robustness)" if "disable_robustness" in flags else "dawn"
    return doc.get("runner") or os.path.basename(path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--out", default="")
    args = ap.parse_args()
    docs = [json.load(open(f)) for f in args.files if os.path.exists(f)]
    names = [label(d, f) for d, f in zip(docs, [f for f in args.files if os.path.exists(f)])]
    by = [{(r["shape"], r["variant"]): r for r in d["results"]} for d in docs]
    keys = list(by[0])
    for d in by[1:]:
        keys += [k for k in d if k not in by[0]]
    print(f"{'shape/variant':56s}" + "".join(f"{n:>22s}" for n in names))
    rows, ratios = [], {n: {} for n in names[1:]}
    for k in keys:
        ms = [d.get(k, {}).get("ms") for d in by]
        cls = next(d[k]["cls"] for d in by if k in d)
        cells = []
        for i, m in enumerate(ms):
            if m is None:
                err = next((d[k].get("error") for d in [by[i]] if k in d), None) or "-"
                cells.append(f"{err[:20]:>22s}")
            elif i and ms[0]:
                ratios[names[i]].setdefault(cls, []).append(m / ms[0])
                cells.append(f"{m:9.3f} ms ({m / ms[0]:5.2f}x)")
            else:
                cells.append(f"{m:12.3f} ms{'':6s}")
        print(f"{k[0] + '/' + k[1]:56s}" + "".join(cells))
        rows.append(dict(shape=k[0], variant=k[1], cls=cls, **{n: m for n, m in zip(names, ms)}))
    print(f"\ngeometric mean of time over {names[0]}'s, per shape class (cases):")
    summary = {}
    for n, per in ratios.items():
        allr = [r for rs in per.values() for r in rs]
        summary[n] = {c: math.exp(sum(map(math.log, rs)) / len(rs)) for c, rs in per.items()}
        if allr:
            summary[n]["all"] = math.exp(sum(map(math.log, allr)) / len(allr))
        print(f"  {n}: " + ", ".join(f"{c} {g:.2f}x ({len(per.get(c, allr))})" for c, g in summary[n].items()))
    print("CPU time encoding one dispatch (median over cases; wgpu-py's is Python's):")
    for n, d in zip(names, docs):
        enc = sorted(r["encode_us"] for r in d["results"] if r.get("encode_us") is not None)
        if enc:
            print(f"  {n}: {enc[len(enc) // 2]:.1f} us")
    if args.out:
        with open(args.out, "w") as f:
            json.dump(dict(runners=names, adapters=[d.get("adapter") for d in docs], rows=rows, geomean=summary), f, indent=1)


if __name__ == "__main__":
    main()
