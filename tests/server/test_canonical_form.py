"""The `tirkit.canonicalForm` command over stdio: the canonical text of the kernel at a line."""
from __future__ import annotations

import pytest
import pytest_lsp
from lsprotocol import types as T
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

import tirkit
from tirkit.script.format import format_text
from lsp_helpers import SERVER_COMMAND, example, open_doc, server_env

pytestmark = pytest.mark.asyncio(loop_scope="module")

TWO = example("valid/module_two_funcs.py")
BAD = example("invalid/undefined_name.py")
MESSY = '''import numpy as np
from tvm.script import tir as T


def helper():
    return 1


@T.prim_func
def add(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = A[vi]+T.float32( 1 )
'''


INIT: list = []


@pytest_lsp.fixture(scope="module",
                    config=ClientServerConfig(server_command=SERVER_COMMAND,
                                              server_env=server_env()))
async def client(lsp_client: LanguageClient):
    INIT.append(await lsp_client.initialize_session(T.InitializeParams(
        capabilities=client_capabilities("visual-studio-code"))))
    for p in (TWO, BAD):
        open_doc(lsp_client, p.as_uri(), p.read_text())
    open_doc(lsp_client, "file:///tmp/messy_kernel.py", MESSY)
    yield
    await lsp_client.shutdown_session()


async def run(client, uri, line):
    return await client.workspace_execute_command_async(T.ExecuteCommandParams(
        command="tirkit.canonicalForm",
        arguments=[uri, {"line": line, "character": 4}]))


async def test_announced(client):
    assert "tirkit.canonicalForm" in INIT[0].capabilities.execute_command_provider.commands


async def test_canonical_text_of_the_kernel_at_the_cursor(client):
    r = await run(client, "file:///tmp/messy_kernel.py", 13)   # the body line of `add`
    assert r["kernel"] == "add" and r["language"] == "python"
    text = r["text"]
    assert "B[vi] = A[vi] + T.float32(1)" in text
    assert "def helper" not in text and "import numpy" not in text
    assert text.startswith("@T.prim_func")
    # the answer is the canonical print: it parses to the same kernel and is a fixpoint
    src = "from tvm.script import tir as T\n\n\n" + text
    assert tirkit.structural_equal(tirkit.parse(MESSY).module, tirkit.parse(src).module)
    assert format_text(src)[0] == src


async def test_an_ir_module_answers_the_whole_module(client):
    text = TWO.read_text().split("\n")
    defs = [i for i, ln in enumerate(text) if ln.lstrip().startswith("def ")]
    assert len(defs) == 2
    for ln in defs:
        r = await run(client, TWO.as_uri(), ln + 1)
        assert r["kernel"] == "Module"
        assert r["text"].startswith("@I.ir_module\nclass Module:")
        assert "def add_one(" in r["text"] and "def scale(" in r["text"]


async def test_outside_any_kernel_and_broken_kernels_answer_a_message(client):
    r = await run(client, "file:///tmp/messy_kernel.py", 4)   # def helper()
    assert r == {"message": "no kernel at line 5"}
    r = await run(client, BAD.as_uri(), 8)
    assert "has errors" in r["message"]
    r = await run(client, "file:///tmp/not-open.py", 0)
    assert r == {"message": "the document is not open"}
