"""What TVM 0.27 reports for each invalid example (the table of docs/validation.md).

Usage:
    python benchmarks/tvm_on_invalid.py [EXAMPLES_DIR]     # prints JSON, one row per file

Each file is rewritten to the tirx spelling (import lines dropped, T.block -> T.sblock,
@T.prim_func -> @T.prim_func(s_tir=True)) and passed to tvm.script.from_source, then
tvm.s_tir.analysis.verify_well_formed, tvm.s_tir.Schedule(debug_mask="all") and
tvm.compile (llvm, or cuda for kernels with thread bindings).  Needs apache-tvm.
"""
import glob
import json
import os
import re
import sys

import tvm
import tvm.script
from tvm import s_tir

def tirx(text):
    text = re.sub(r"^from tvm\.script import .*$", "", text, flags=re.M)
    text = re.sub(r"\bT\.block\(", "T.sblock(", text)
    return re.sub(r"@T\.prim_func\s*\n", "@T.prim_func(s_tir=True)\n", text)

def short(e):
    s = str(e).strip().splitlines()
    s = [l for l in s if l.strip()]
    return (type(e).__name__ + ": " + (s[-1] if s else ""))[:160]

out = {}
EXAMPLES = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "examples", "invalid")
for p in sorted(glob.glob(os.path.join(EXAMPLES, "*.py"))):
    name = os.path.basename(p)
    row = {}
    text = tirx(open(p).read())
    try:
        mod = tvm.script.from_source(text)
        if isinstance(mod, tvm.tirx.PrimFunc):
            mod = tvm.IRModule({"main": mod})
        row["parse"] = "ok"
    except Exception as e:
        row["parse"] = short(e); out[name] = row; continue
    try:
        ok = s_tir.analysis.verify_well_formed(mod, assert_mode=False)
        row["verify_well_formed"] = "ok" if ok else "False"
    except Exception as e:
        row["verify_well_formed"] = short(e)
    try:
        s_tir.Schedule(mod, debug_mask="all")
        row["schedule"] = "ok"
    except Exception as e:
        row["schedule"] = short(e)
    gpu = "thread_binding" in text
    tgt = tvm.target.Target("cuda") if gpu else tvm.target.Target({"kind": "llvm"})
    try:
        tvm.compile(mod, target=tgt)
        row["compile"] = "ok (" + ("cuda" if gpu else "llvm") + ")"
    except Exception as e:
        row["compile"] = short(e)
    out[name] = row
json.dump(out, sys.stdout, indent=1)
