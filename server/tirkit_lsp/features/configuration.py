"""Settings under `tirkit`: `diagnostics.mode` (onChange | onSave), `diagnostics.debounceMs`,
`diagnostics.push` (auto | always) and `target`, read from initializationOptions, from
`workspace/configuration` after `initialized`, and again on `didChangeConfiguration`.

A document's project configuration (`[tool.tirkit]` in pyproject.toml, or tirkit.toml,
found by walking up from its file) applies too; the editor's `target`, `select`, `ignore`,
`warnUnusedIgnores` and `constants.inlineThreshold` override the file's keys."""
from __future__ import annotations

import logging

from lsprotocol import types as T

from tirkit.project.config import Config, ConfigError, resolve

log = logging.getLogger("tirkit_lsp")


def remember(server, cfg) -> None:
    """Apply editor settings and keep what the editor said (for `project_config`)."""
    if not isinstance(cfg, dict):
        return
    server.settings.update(cfg)
    server.editor_settings.update(cfg)


def editor_overrides(raw: dict) -> dict:
    """The project keys the editor's settings set, as `resolve` overrides."""
    def pick(*names):
        for n in names:
            node = raw
            for part in n.split("."):
                node = node.get(part) if isinstance(node, dict) else None
            if node is not None:
                return node
            if n in raw:
                return raw[n]
        return None
    out = {}
    target = pick("target")
    if isinstance(target, str) and target:
        out["target"] = target
    for key in ("select", "ignore"):
        v = pick(key)
        if isinstance(v, (list, str)):
            out[key] = v
    warn = pick("warnUnusedIgnores")
    if isinstance(warn, bool):
        out["warn_unused_ignores"] = warn
    thr = pick("constants.inlineThreshold")
    if isinstance(thr, int) and not isinstance(thr, bool) and thr >= 0:
        out["inline_threshold"] = thr
    return out


def project_config(server, path) -> Config:
    """The configuration of the file at `path`, the editor's settings on top.  A broken
    configuration file is logged and the defaults (with the editor's settings) apply."""
    over = editor_overrides(server.editor_settings)
    try:
        return resolve(path, **over) if path else Config().with_overrides(**over)
    except ConfigError as e:
        log.warning("configuration: %s", e)
        try:
            return Config().with_overrides(**over)
        except ConfigError:
            return Config()


def document_target(server, a) -> str | None:
    """The target configured for an analysed document (editor setting over project file)."""
    return project_config(server, getattr(a, "path", None)).target


def document_intrinsics(server, a) -> tuple:
    """Folders of more tensor intrinsics for a document: the editor's `tirkit.intrinsics`,
    then the project file's `intrinsics`."""
    cfg = project_config(server, getattr(a, "path", None))
    return tuple(server.settings.intrinsics) + tuple(cfg.intrinsics)


def setup(server) -> None:
    server.editor_settings = {}

    def on_initialize(params: T.InitializeParams):
        try:
            opts = params.initialization_options
            if isinstance(opts, dict):
                remember(server, opts.get("tirkit", opts))
        except Exception as e:
            server.log_error("initialize options", e)

    server.feature(T.INITIALIZE)(on_initialize)

    async def pull_settings():
        if not server.client_supports("workspace", "configuration"):
            return
        try:
            res = await server.workspace_configuration_async(T.ConfigurationParams(
                items=[T.ConfigurationItem(section="tirkit")]))
        except Exception as e:
            server.log_error("workspace/configuration", e)
            return
        if res and isinstance(res[0], dict):
            remember(server, res[0])

    @server.safe_feature(T.INITIALIZED)
    async def initialized(params):
        await pull_settings()

    @server.safe_feature(T.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def changed(params: T.DidChangeConfigurationParams):
        s = params.settings
        if isinstance(s, dict) and isinstance(s.get("tirkit"), dict):
            remember(server, s["tirkit"])
        else:
            await pull_settings()
        from .diagnostics import refresh_all
        await refresh_all(server)
        # lenses and hints show the roofline target: ask the client to fetch them again
        if server.client_supports("workspace", "code_lens", "refresh_support"):
            await server.quietly(server.workspace_code_lens_refresh_async(None))
        if server.client_supports("workspace", "inlay_hint", "refresh_support"):
            await server.quietly(server.workspace_inlay_hint_refresh_async(None))
