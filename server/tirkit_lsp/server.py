"""The language server: documents, settings, analysis off the event loop, safe features.

Every feature module under `features/` has `setup(server)` and registers its handlers with
`server.safe_feature(...)`: a handler that raises is logged and answers its empty value, so
no input ever takes the server down.  Analyses run in a thread pool, keyed by (URI,
version); a result for a version the document has moved past is dropped, never published.
"""
from __future__ import annotations

import asyncio
import logging
import time
import traceback
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from lsprotocol import types as T
from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer
from tirkit.script.parallel import parse_pool
from tirkit.script.parse import thaw

from . import __version__
from .convert import Converter
from .documents import Analysis, AnalysisCache
from .priority import INTERACTIVE, RequestsFirst
from .protocol import TirkitProtocol

log = logging.getLogger("tirkit_lsp")


@dataclass
class Settings:
    """`tirkit.*` settings (workspace/configuration or initializationOptions)."""
    diagnostics_mode: str = "onSave"      # when the full rule set runs: "onChange" | "onSave"
    target: str | None = None              # rules and roofline; None: by kernel (GPU or CPU)
    debounce_ms: float = 10.0              # quiet time after a change before fast diagnostics
    push: str = "auto"                     # "auto": push unless the client pulls; "always"
    progress_after_ms: float = 1000.0      # report work-done progress for work longer than this
    # formatting: `T.allocate_const` tensors with more elements go to the script's .params file
    inline_threshold: int = 64
    # folders of more intrinsic files (`tirkit.intrinsics`): the tensorize hint, quick fix and
    # hover read them, and the rules through `run_rules(..., intrinsics=)`
    intrinsics: tuple = ()
    tune_lens: bool = False                # a "Tune this kernel" code lens on each kernel
    tune_trials: int = 32                  # candidates "Tune this kernel" measures

    def roofline_target(self, func, configured: str | None = None) -> str:
        """The target of hover's and the code lens's estimates: the document's configured
        target (the project file's, the editor's setting over it), else chosen by kernel."""
        from tirkit.analysis.cost import default_target
        return configured or self.target or default_target(func)

    def update(self, cfg) -> None:
        if not isinstance(cfg, dict):
            return
        diag = cfg.get("diagnostics") if isinstance(cfg.get("diagnostics"), dict) else {}
        mode = diag.get("mode", cfg.get("diagnostics.mode"))
        if mode in ("onChange", "onSave"):
            self.diagnostics_mode = mode
        deb = diag.get("debounceMs", cfg.get("diagnostics.debounceMs"))
        if isinstance(deb, (int, float)) and 0 <= deb <= 10_000:
            self.debounce_ms = float(deb)
        push = diag.get("push", cfg.get("diagnostics.push"))
        if push in ("auto", "always"):
            self.push = push
        prog = cfg.get("progressAfterMs")
        if isinstance(prog, (int, float)) and 0 <= prog <= 60_000:
            self.progress_after_ms = float(prog)
        target = cfg.get("target")
        if isinstance(target, str) and target:
            self.target = target
        elif "target" in cfg and not target:       # unset again: the project file decides
            self.target = None
        consts = cfg.get("constants") if isinstance(cfg.get("constants"), dict) else {}
        thr = consts.get("inlineThreshold", cfg.get("constants.inlineThreshold"))
        if isinstance(thr, int) and not isinstance(thr, bool) and thr >= 0:
            self.inline_threshold = thr
        elif ("inlineThreshold" in consts or "constants.inlineThreshold" in cfg) and thr is None:
            self.inline_threshold = Settings.inline_threshold
        dirs = cfg.get("intrinsics")
        if isinstance(dirs, str):
            dirs = [dirs] if dirs else []
        if isinstance(dirs, list) and all(isinstance(d, str) for d in dirs):
            self.intrinsics = tuple(dirs)
        tune = cfg.get("tune") if isinstance(cfg.get("tune"), dict) else {}
        lens = tune.get("codeLens", cfg.get("tune.codeLens"))
        if isinstance(lens, bool):
            self.tune_lens = lens
        trials = tune.get("trials", cfg.get("tune.trials"))
        if isinstance(trials, int) and not isinstance(trials, bool) and 0 < trials <= 100_000:
            self.tune_trials = trials


class TirkitServer(LanguageServer):
    def __init__(self):
        super().__init__("tirkit-lsp", __version__,
                         text_document_sync_kind=T.TextDocumentSyncKind.Incremental,
                         protocol_cls=TirkitProtocol)
        self.settings = Settings()
        self.cache = AnalysisCache()
        self.executor = ThreadPoolExecutor(max_workers=2, thread_name_prefix="tirkit")
        # the rules run apart, so that parses and reads (hover, symbols) never queue behind them
        self.rules_executor = ThreadPoolExecutor(max_workers=2, thread_name_prefix="tirkit-rules")
        # processes that parse the definitions of a large file opened cold (no process starts
        # before one is needed; edits are parsed here, function by function)
        self.parse_pool = parse_pool()
        # requests the user waits for (hover, completion ...) go before the rules
        self.requests_first = RequestsFirst()
        self._inflight: dict = {}          # (uri, version) -> asyncio.Future[Analysis]
        self.saved_versions: dict = {}     # uri -> version last saved
        self.diagnostic_tasks: dict = {}   # uri -> the scheduled diagnostics task
        self.pushed_on_save: set = set()   # uris with on-save diagnostics pushed to a puller
        self.shutdown_requested = False    # `shutdown` received (the exit code is then 0)
        self.features: list = []
        self.change_listeners: list = []   # fn(uri), called after each didChange is applied

    # ------------------------------------------------------------------ plumbing
    @property
    def encoding(self) -> str:
        enc = getattr(self.workspace, "position_encoding", None) if self._has_workspace() \
            else None
        return str(getattr(enc, "value", enc) or "utf-16")

    def _has_workspace(self) -> bool:
        try:
            return self.protocol.workspace is not None
        except Exception:
            return False

    def converter(self, a: Analysis) -> Converter:
        return Converter(a.lines, self.encoding)

    def client_supports(self, *path) -> bool:
        node = self.client_capabilities
        for p in path:
            node = getattr(node, p, None)
            if node is None:
                return False
        return bool(node)

    def log_error(self, what: str, exc: BaseException) -> None:
        log.error("%s failed: %s\n%s", what, exc, "".join(traceback.format_exception(exc)))
        try:
            self.window_log_message(T.LogMessageParams(
                type=T.MessageType.Error, message=f"tirkit-lsp: {what} failed: "
                                                   f"{type(exc).__name__}: {exc}"))
        except Exception:
            pass

    def safe_feature(self, method: str, options=None, default=None):
        """Register an async handler that logs its errors and answers `default` instead
        (a `JsonRpcException` it raises on purpose goes to the client as an error)."""
        first = method in INTERACTIVE

        def deco(fn):
            async def handler(params):
                if first:
                    self.requests_first.begin()
                try:
                    return await fn(params)
                except (asyncio.CancelledError, JsonRpcException):
                    raise                       # cancellations and deliberate protocol errors
                except Exception as e:          # a failing feature answers empty
                    self.log_error(method, e)
                    return default() if callable(default) else default
                finally:
                    if first:
                        self.requests_first.end()
            handler.__name__ = fn.__name__
            self.feature(method, options)(handler) if options is not None else \
                self.feature(method)(handler)
            return fn
        return deco

    async def quietly(self, request, timeout: float = 5.0):
        """Await a request to the client; a client that fails it is only logged."""
        try:
            return await asyncio.wait_for(request, timeout)
        except Exception as e:
            log.info("client request failed: %s", e)
            return None

    async def run_sync(self, fn, *args, title=None, rules=False):
        """Run `fn(*args)` in the analysis pool (`rules`: the pool that runs the rules), off
        the event loop; work that takes over a second is reported to the client as
        work-done progress."""
        pool = self.rules_executor if rules else self.executor
        fut = asyncio.get_running_loop().run_in_executor(pool, fn, *args)
        name = title or f"tirkit: {fn.__name__.replace('_', ' ')}"
        return await self.with_progress(name, fut)

    # ------------------------------------------------------------------ documents
    def snapshot(self, uri: str):
        """(version, text) of an open document, or None."""
        try:
            doc = self.workspace.get_text_document(uri)
            return doc.version, doc.source
        except Exception:
            return None

    def current_version(self, uri: str):
        snap = self.snapshot(uri)
        return snap[0] if snap else None

    def is_current(self, a: Analysis) -> bool:
        return self.current_version(a.uri) == a.version

    async def analysis(self, uri: str) -> Analysis | None:
        """The analysis of the document's current version (built off the loop, shared)."""
        snap = self.snapshot(uri)
        if snap is None:
            return None
        version, text = snap
        a = self.cache.get(uri, version)
        if a is not None:
            return a
        key = (uri, version)
        fut = self._inflight.get(key)
        if fut is None:
            fut = asyncio.ensure_future(self._build(uri, version, text))
            self._inflight[key] = fut
        return await asyncio.shield(fut)

    async def _build(self, uri, version, text) -> Analysis:
        try:
            a = await self.run_sync(Analysis, uri, version, text, self.cache.latest(uri),
                                    self.protocol.known_lines(uri, text), self.parse_pool,
                                    title="tirkit: analysing")
            if self.current_version(uri) == version:     # an outdated analysis is not kept
                self.cache.put(a)
            return a
        finally:
            self._inflight.pop((uri, version), None)

    async def with_progress(self, title: str, awaitable, after: float = None):
        """Await `awaitable`; if it takes over `after` seconds (the `progressAfterMs`
        setting, one second by default), report work-done progress."""
        if after is None:
            after = self.settings.progress_after_ms / 1000.0
        task = asyncio.ensure_future(awaitable)
        done, _ = await asyncio.wait({task}, timeout=after)
        if done:
            return task.result()
        token = None
        if self.client_supports("window", "work_done_progress"):
            token = f"tirkit-{uuid.uuid4().hex[:12]}"
            try:
                await asyncio.wait_for(self.work_done_progress.create_async(token), 2.0)
                self.work_done_progress.begin(token, T.WorkDoneProgressBegin(
                    title=title, cancellable=False, message="working"))
            except Exception as e:
                log.info("progress unavailable: %s", e)
                token = None
        t0 = time.perf_counter()
        try:
            return await task
        finally:
            if token is not None:
                try:
                    self.work_done_progress.end(token, T.WorkDoneProgressEnd(
                        message=f"done in {time.perf_counter() - t0 + after:.1f} s"))
                except Exception:
                    pass

    def forget(self, uri: str) -> None:
        self.cache.drop(uri)
        self.saved_versions.pop(uri, None)
        thaw()                  # a large file's analysis may have been frozen: let it go


def create_server() -> TirkitServer:
    from .features import setup_all
    server = TirkitServer()
    setup_all(server)
    return server
