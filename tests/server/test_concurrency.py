"""Several threads answer hovers and code actions over one document while new versions of it
arrive (each analysed on its own thread, reusing what the versions before it analysed), and
every answer equals the one a single thread gives for the same version with every cache
cleared.  The server's feature functions run as the server runs them, on `Analysis`
objects, with the server's converter and settings."""
import random
import threading

from lsprotocol import types as T

import tirkit
from tirkit.schedule.actions import apply_action
from tirkit.schedule.errors import ScheduleError
from tirkit_lsp.documents import Analysis
from tirkit_lsp.features.code_actions import list_actions
from tirkit_lsp.features.hover import hover_at
from tirkit_lsp.server import create_server

URI = "file:///tmp/stress_module.py"
HEADER = "from tvm.script import ir as I\nfrom tvm.script import tir as T\n\n\n"


def method(i: int, n: int) -> str:
    return f'''    @T.prim_func
    def k{i}(A: T.Buffer(({n}, {n}), "float32"), B: T.Buffer(({n},), "float32")):
        for i, j in T.grid({n}, {n}):
            with T.block("sum"):
                vi, vj = T.axis.remap("SR", [i, j])
                with T.init():
                    B[vi] = T.float32(0)
                B[vi] = B[vi] + A[vi, vj]
'''


def versions(count: int, seed: int = 3) -> list:
    """Texts of one module as an editor makes them: extents change, lines come and go."""
    rng = random.Random(seed)
    sizes = [16, 32, 64, 16, 32]
    extra = 0
    out = []
    for _ in range(count):
        k = rng.randrange(len(sizes))
        sizes[k] = rng.choice([8, 16, 32, 64, 128])
        extra = max(0, extra + rng.choice([-1, 1]))
        body = "\n".join(method(i, n) for i, n in enumerate(sizes))
        out.append(HEADER + "# note\n" * extra + f"@I.ir_module\nclass Module:\n{body}")
    return out


def positions(text: str) -> list:
    """(line, character) of every block name, loop variable and buffer use (0-based)."""
    out = []
    for ln, line in enumerate(text.split("\n")):
        for needle in ('T.block("', "for i", "B[vi]"):
            col = line.find(needle)
            if col >= 0:
                out.append((ln, col + len(needle) - 1))
    return out


def answers(server, a) -> dict:
    """Every hover and code action (with its edit) of one analysis, as plain data."""
    out = {}
    for line, col in positions(a.text):
        pos = T.Position(line=line, character=col)
        hov = hover_at(server, a, pos)
        out[("hover", line, col)] = None if hov is None else hov.contents.value
        acts = list_actions(server, a, T.Range(start=pos, end=pos))
        out[("actions", line, col)] = [x.title for x in acts]
        for act in acts[:2]:
            try:
                new_text, python = apply_action(a.result, act)
            except ScheduleError as e:
                new_text, python = None, str(e)
            out[("apply", line, col, act.title)] = (new_text, python)
    return out


def test_hovers_and_code_actions_from_threads_equal_single_threaded():
    server = create_server()
    texts = versions(6)
    newest = [None]
    got = []                          # (version, answers)
    errors = []
    done = threading.Event()
    lock = threading.Lock()

    def editor():
        try:
            for v, text in enumerate(texts, 1):
                a = Analysis(URI, v, text)
                a.diagnostics(False)           # the rules run while readers work
                newest[0] = a
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)
        finally:
            done.set()

    def reader():
        try:
            seen = set()
            while not done.is_set() or newest[0].version not in seen:
                a = newest[0]
                if a is None:
                    continue
                seen.add(a.version)
                res = answers(server, a)
                with lock:
                    got.append((a.version, res))
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    tirkit.clear_caches()
    threads = [threading.Thread(target=editor)] + [threading.Thread(target=reader)
                                                   for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(500)
    assert not errors, errors
    assert len({v for v, _ in got}) >= 2        # readers saw several versions go by
    reference = {}
    for v, res in got:
        if v not in reference:
            tirkit.clear_caches()
            a = Analysis(URI, v, texts[v - 1])
            reference[v] = answers(server, a)
        diff = {k: (res.get(k), reference[v].get(k)) for k in set(res) | set(reference[v])
                if res.get(k) != reference[v].get(k)}
        assert not diff, (v, diff)
    # the answers are about something: hovers and actions were found
    some = next(iter(reference.values()))
    assert any(k[0] == "hover" and x for k, x in some.items())
    assert any(k[0] == "apply" and x[0] for k, x in some.items())
