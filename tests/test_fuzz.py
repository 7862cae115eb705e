"""Never a traceback: mutated kernels (truncated, lines deleted, tokens swapped and
duplicated, random and non-UTF-8 bytes, token splices, line swaps, crossovers of two
kernels, numbers replaced, indentation noise) all end in diagnostics, in-process and via the
CLI.  `benchmarks/fuzz_mutants.py` runs the same kinds over many more mutants."""
import os
import re
import subprocess
import sys
from pathlib import Path

import tirkit
from conftest import EXAMPLES
from tirkit.diagnostics import Diagnostic
from fuzz_mutators import FIRST_KINDS, SECOND_KINDS
from fuzz_mutators import mutants as fuzz_mutants

ROOT = Path(__file__).resolve().parent.parent
SEEDS = sorted((EXAMPLES / "valid").glob("*.py")) + sorted((EXAMPLES / "invalid").glob("*.py"))
N_MUTANTS = 2000


def mutants(n, seed=20240, kinds=FIRST_KINDS):
    sources = [p.read_bytes() for p in SEEDS]
    return fuzz_mutants(sources, n, seed, kinds)


def _valid_span(d, n_lines):
    s = d.span
    return (s is not None and 1 <= s.line <= s.end_line <= n_lines + 1 and s.column >= 1
            and (s.end_line > s.line or s.end_column >= s.column))


def _failures(muts):
    """(failures, diagnostic code families seen, mutants with an error)."""
    failures = []
    kinds = set()
    with_errors = 0
    for k, data in muts:
        try:
            diags = tirkit.check(data, path=f"mutant{k}.py")
        except Exception as e:  # noqa: BLE001 - the point of the test
            failures.append((k, f"{type(e).__name__}: {e}", data[:300]))
            continue
        n_lines = data.count(b"\n") + 1
        bad = [d for d in diags if not isinstance(d, Diagnostic) or d.code == "internal"
               or not _valid_span(d, n_lines)]
        if bad:
            failures.append((k, bad[0], data[:300]))
        kinds.update(d.code.split("/")[0] for d in diags)
        with_errors += any(d.severity == "error" for d in diags)
    return failures, kinds, with_errors


def test_mutated_kernels_end_in_diagnostics_in_process():
    failures, kinds, with_errors = _failures(mutants(N_MUTANTS))
    assert failures == []
    # the mutants really do break things, in many ways
    assert with_errors > N_MUTANTS // 2
    assert {"syntax", "name", "type"} <= kinds


def test_splices_swaps_crossovers_numbers_indentation_end_in_diagnostics():
    n = 1000
    failures, kinds, with_errors = _failures(mutants(n, seed=2126, kinds=SECOND_KINDS))
    assert failures == []
    assert with_errors > n // 3
    assert {"syntax", "name", "type"} <= kinds


def test_mutated_kernels_through_the_cli(tmp_path):
    paths = []
    for k, data in mutants(20, seed=7):
        p = tmp_path / f"mutant{k}.py"
        p.write_bytes(data)
        paths.append(str(p))
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "language"), env.get("PYTHONPATH", "")])
    r = subprocess.run([sys.executable, "-m", "tirkit.cli", "check", *paths],
                       capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode in (0, 1)
    assert "Traceback" not in r.stdout + r.stderr
    assert "20 files checked" in r.stderr
    assert re.search(r"mutant\d+\.py:\d+:\d+: error: .* \[syntax\]", r.stdout)


def test_every_mutator_takes_an_empty_program():
    """A truncation to nothing followed by another mutation had stopped fuzz_run.py."""
    import random
    from fuzz_mutators import MUTATORS
    rng = random.Random(3)
    for m in MUTATORS:
        for _ in range(10):
            assert isinstance(m(rng, b"", b"x = 1\n"), bytes), m.__name__
