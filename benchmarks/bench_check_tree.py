"""`tirkit check` over a whole tree: the extracted TVM test-suite corpus (benchmarks/CORPUS.md),
cold and with the result cache, on every core, against a serial run of the same files.

Usage:
    python benchmarks/bench_check_tree.py [--corpus /work/corpus] [--repeat 3] [--out FILE]

Each measured command is `tirkit check --format json --exit-zero DIR...` in a subprocess
(what a user or CI types), with a fresh cache folder:

- anchor: `--jobs 1 --no-cache`, one process, nothing cached;
- first run: every core (the default), the cache empty; it fills it;
- second run: nothing changed, every file answered from the cache (median of `--repeat`).

Reported: wall time of each, CPU time of the first run over its wall time (the cores it
kept busy), first run over the anchor (the parallel speed-up) and first run over second run
(the cache's speed-up; target at least 5x).  The three outputs must be identical.
"""
from __future__ import annotations

import argparse
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def tirkit_cmd():
    return [sys.executable, "-m", "tirkit.cli"]


def env():
    e = dict(os.environ)
    e["PYTHONPATH"] = os.pathsep.join([os.path.join(ROOT, "language"),
                                       os.path.join(ROOT, "server"), e.get("PYTHONPATH", "")])
    e.pop("TIRKIT_CACHE_DIR", None)
    return e


def _cpu_seconds(pid):
    """CPU seconds (user + system) of a live process, from /proc; None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


def _children(pid):
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as fh:
                    if int(fh.read().rsplit(")", 1)[1].split()[1]) == pid:
                        out.append(int(d))
            except (OSError, IndexError, ValueError):
                pass
    return out


def timed(args, cwd, watch=False):
    """(wall seconds, CPU seconds of the process and its workers, stdout, {worker pid: CPU
    seconds last seen}); `watch` samples the worker processes' CPU from /proc."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.Popen(tirkit_cmd() + args, cwd=cwd, env=env(), stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    workers = {}
    if watch:
        import threading
        out_box = {}
        reader = threading.Thread(target=lambda: out_box.update(
            zip(("out", "err"), p.communicate())))
        reader.start()
        while reader.is_alive():
            for c in _children(p.pid):
                cpu = _cpu_seconds(c)
                if cpu is not None:
                    workers[c] = cpu
            reader.join(0.5)
        stdout, stderr = out_box.get("out", ""), out_box.get("err", "")
    else:
        stdout, stderr = p.communicate()
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        raise SystemExit(f"tirkit check failed ({p.returncode}): {stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, stdout, workers


def cache_stamp(folder):
    """The cache files' (name, mtime) (a run that checks any file writes its file again)."""
    try:
        return sorted((n, os.stat(os.path.join(folder, n)).st_mtime_ns)
                      for n in os.listdir(folder) if n.endswith(".json"))
    except OSError:
        return None


def count_files(dirs):
    return sum(1 for d in dirs for _, _, fs in os.walk(d) for f in fs if f.endswith(".py"))


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", default="/work/corpus")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", default=os.path.join(HERE, "results", "check_tree.md"))
    a = ap.parse_args(argv)
    dirs = [os.path.join(a.corpus, d) for d in ("classic", "tirx")]
    load_before = os.getloadavg()[0]
    files = count_files(dirs)
    work = tempfile.mkdtemp(prefix="tirkit-bench-tree-")
    cache = os.path.join(work, "cache")
    base = ["check", "--format", "json", "--exit-zero", *dirs]
    try:
        print(f"{files} files; anchor: serial, no cache ...", flush=True)
        s_wall, s_cpu, s_out, _ = timed(base + ["--jobs", "1", "--no-cache"], work)
        print(f"  {s_wall:.1f} s; first run, every core, empty cache ...", flush=True)
        f_wall, f_cpu, f_out, workers = timed(base + ["--cache-dir", cache], work, watch=True)
        print(f"  {f_wall:.1f} s (CPU {f_cpu:.1f} s); second run ...", flush=True)
        seconds, outs, rewrote = [], [], 0
        for _ in range(a.repeat):
            stamp = cache_stamp(cache)
            w, _, out, _ = timed(base + ["--cache-dir", cache], work)
            rewrote += cache_stamp(cache) != stamp      # a miss rewrites the cache file
            seconds.append(w)
            outs.append(out)
        w_wall = statistics.median(seconds)
        print(f"  {w_wall:.2f} s (median of {a.repeat})", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    load_after = os.getloadavg()[0]
    same = s_out == f_out and all(o == f_out for o in outs) and not rewrote
    import json
    diags = len(json.loads(f_out))
    lines = [
        "# Whole-tree `tirkit check`: parallel and cached",
        "",
        "`python benchmarks/bench_check_tree.py` (this file is its output). The corpus is the",
        "extracted TVM test-suite programs (benchmarks/CORPUS.md), checked as one command over",
        "both folders: `tirkit check --format json --exit-zero classic tirx`.",
        "",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}; shared and noisy, so compare the rows of this run only",
        f"(1-minute load average {load_before:.1f} at the start, {load_after:.1f} at the end:",
        "with a load above the core count, `cores busy` measures the share this run got, not",
        "how many cores it can use).",
        "",
        "| run | wall time | CPU time | cores busy | vs anchor |",
        "| --- | ---: | ---: | ---: | ---: |",
        f"| anchor: serial (`--jobs 1 --no-cache`) | {s_wall:.1f} s | {s_cpu:.1f} s | "
        f"{s_cpu / s_wall:.2f} | 1.00x |",
        f"| first run: every core, empty cache | {f_wall:.1f} s | {f_cpu:.1f} s | "
        f"{f_cpu / f_wall:.2f} | {s_wall / f_wall:.2f}x faster |",
        f"| second run: unchanged tree, from the cache (median of {a.repeat}) | "
        f"{w_wall:.2f} s | – | – | {s_wall / w_wall:.1f}x faster |",
        "",
        f"- files: {files}; diagnostics reported: {diags}; the three runs' outputs identical "
        f"and every second run answered wholly from the cache: {'yes' if same else 'NO'}",
        f"- second run over first run: **{f_wall / w_wall:.1f}x faster** (target: at least 5x)",
        f"- parallel speed-up of the first run over the serial anchor: {s_wall / f_wall:.2f}x "
        f"on {os.cpu_count()} cores",
        f"- the first run's worker processes (sampled from /proc every 0.5 s): {len(workers)}, "
        f"CPU seconds each (at least): "
        f"{', '.join(f'{c:.1f}' for c in sorted(workers.values(), reverse=True)) or '-'}",
        "",
        "The cache is one JSON file per tirkit version in `.tirkit_cache/` at the project root",
        "(here a temporary `--cache-dir`); an entry is valid while the file's content hash, the",
        "configuration's fingerprint and tirkit's version and sources are unchanged. The second",
        "run still reads and hashes every file and starts Python once.",
        "",
    ]
    os.makedirs(os.path.dirname(a.out), exist_ok=True)
    with open(a.out, "w", encoding="utf-8") as fh:
        fh.write("\n".join(lines))
    print("\n".join(lines))
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
