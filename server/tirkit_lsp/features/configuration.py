"""Settings under `tirkit`: `diagnostics.mode` (onChange | onSave), `diagnostics.debounceMs`,
`diagnostics.push` (auto | always) and `target`, read from initializationOptions, from
`workspace/configuration` after `initialized`, and again on `didChangeConfiguration`."""
from __future__ import annotations

from lsprotocol import types as T


def setup(server) -> None:
    def on_initialize(params: T.InitializeParams):
        try:
            opts = params.initialization_options
            if isinstance(opts, dict):
                server.settings.update(opts.get("tirkit", opts))
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
            server.settings.update(res[0])

    @server.safe_feature(T.INITIALIZED)
    async def initialized(params):
        await pull_settings()

    @server.safe_feature(T.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def changed(params: T.DidChangeConfigurationParams):
        s = params.settings
        if isinstance(s, dict) and isinstance(s.get("tirkit"), dict):
            server.settings.update(s["tirkit"])
        else:
            await pull_settings()
        from .diagnostics import refresh_all
        await refresh_all(server)
        # lenses and hints show the roofline target: ask the client to fetch them again
        if server.client_supports("workspace", "code_lens", "refresh_support"):
            await server.quietly(server.workspace_code_lens_refresh_async(None))
        if server.client_supports("workspace", "inlay_hint", "refresh_support"):
            await server.quietly(server.workspace_inlay_hint_refresh_async(None))
