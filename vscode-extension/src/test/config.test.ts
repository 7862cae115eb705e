// Unit tests for the configuration handling (node's test runner: `npm test`).
import { strict as assert } from "node:assert";
import { test } from "node:test";
import {
  DEFAULTS,
  SERVER_COMMANDS,
  describeLaunch,
  displayCommandResult,
  initializationOptions,
  installCommand,
  interpretProbe,
  isMissingCommandError,
  needsRestart,
  probeFor,
  readSettings,
  resolveLaunch,
  serverHasCommand,
  splitCommandLine,
  statusItem,
  viewPath,
} from "../config";

/** A reader over a flat map of `tirkit.*` keys, like WorkspaceConfiguration.get. */
const reader = (values: Record<string, unknown>) => (key: string) => values[key];

test("unset settings give the documented defaults", () => {
  const { settings, problems } = readSettings(reader({}));
  assert.deepEqual(settings, { ...DEFAULTS, serverCommand: [] });
  // target and threshold unset: the project's configuration decides
  assert.equal(settings.target, null);
  assert.equal(settings.diagnosticsMode, "onSave");
  assert.equal(settings.inlineThreshold, null);
  assert.deepEqual(problems, []);
});

test("null (the package.json default) leaves target and threshold unset, without a problem", () => {
  const { settings, problems } = readSettings(reader({ target: null, "constants.inlineThreshold": null }));
  assert.equal(settings.target, null);
  assert.equal(settings.inlineThreshold, null);
  assert.deepEqual(problems, []);
});

test("valid values are read and trimmed", () => {
  const { settings, problems } = readSettings(reader({
    "server.command": ["  /opt/venv/bin/tirkit-lsp ", "--log-level", "INFO", ""],
    "server.pythonPath": " /usr/bin/python3.11 ",
    target: " cuda ",
    "diagnostics.mode": "onChange",
    "constants.inlineThreshold": 256,
    "trace.server": "verbose",
  }));
  assert.deepEqual(problems, []);
  assert.deepEqual(settings.serverCommand, ["/opt/venv/bin/tirkit-lsp", "--log-level", "INFO"]);
  assert.equal(settings.pythonPath, "/usr/bin/python3.11");
  assert.equal(settings.target, "cuda");
  assert.equal(settings.diagnosticsMode, "onChange");
  assert.equal(settings.inlineThreshold, 256);
  assert.equal(settings.trace, "verbose");
});

test("invalid values fall back to defaults, one problem each naming the setting", () => {
  const { settings, problems } = readSettings(reader({
    "server.command": 42,
    "server.pythonPath": ["python"],
    target: 7,
    "diagnostics.mode": "always",
    "constants.inlineThreshold": -3,
    "trace.server": "loud",
  }));
  assert.equal(problems.length, 6);
  for (const key of ["server.command", "server.pythonPath", "target", "diagnostics.mode",
    "constants.inlineThreshold", "trace.server"]) {
    assert.ok(problems.some((p) => p.startsWith(`tirkit.${key} `)), key);
  }
  assert.deepEqual(settings.serverCommand, []);
  assert.equal(settings.target, null);
  assert.equal(settings.diagnosticsMode, "onSave");
  assert.equal(settings.inlineThreshold, null);
  assert.equal(settings.trace, "off");
});

test("a fractional threshold is rejected, zero is accepted", () => {
  assert.equal(readSettings(reader({ "constants.inlineThreshold": 2.5 })).settings.inlineThreshold, null);
  assert.equal(readSettings(reader({ "constants.inlineThreshold": 0 })).settings.inlineThreshold, 0);
});

test("a server command given as one string is split like a shell would, quotes kept together", () => {
  assert.deepEqual(splitCommandLine(`"/opt/my env/bin/python" -m tirkit_lsp  --log-file '/tmp/a b.log'`),
    ["/opt/my env/bin/python", "-m", "tirkit_lsp", "--log-file", "/tmp/a b.log"]);
  assert.deepEqual(readSettings(reader({ "server.command": "tirkit-lsp --stdio" })).settings.serverCommand,
    ["tirkit-lsp", "--stdio"]);
  assert.deepEqual(splitCommandLine(`a "" b`), ["a", "", "b"]);
});

test("launch: the explicit command wins over every interpreter", () => {
  const s = readSettings(reader({ "server.command": ["tirkit-lsp", "--log-level", "DEBUG"], "server.pythonPath": "/x/python" })).settings;
  const l = resolveLaunch(s, ["/venv/bin/python"]);
  assert.deepEqual(l, { command: "tirkit-lsp", args: ["--log-level", "DEBUG"], source: "command" });
});

test("launch: the configured interpreter wins over the Python extension", () => {
  const s = readSettings(reader({ "server.pythonPath": "/x/python" })).settings;
  const l = resolveLaunch(s, ["/venv/bin/python"]);
  assert.equal(l.command, "/x/python");
  assert.deepEqual(l.args, ["-m", "tirkit_lsp", "--stdio"]);
  assert.equal(l.source, "pythonPath");
});

test("launch: the Python extension's interpreter, including a multi-word exec command", () => {
  const s = readSettings(reader({})).settings;
  const l = resolveLaunch(s, ["conda", "run", "-n", "kern", "python"]);
  assert.equal(l.command, "conda");
  assert.deepEqual(l.args, ["run", "-n", "kern", "python", "-m", "tirkit_lsp", "--stdio"]);
  assert.equal(l.source, "pythonExtension");
  assert.equal(describeLaunch(l), "conda run -n kern python -m tirkit_lsp --stdio");
});

test("launch: python3 when nothing else is known", () => {
  for (const ext of [undefined, null, [], [""]]) {
    const l = resolveLaunch(readSettings(reader({})).settings, ext as string[] | undefined);
    assert.equal(l.command, "python3");
    assert.equal(l.source, "default");
  }
});

test("only server command and interpreter changes restart the server", () => {
  assert.equal(needsRestart((k) => k === "server.pythonPath"), true);
  assert.equal(needsRestart((k) => k === "server.command"), true);
  assert.equal(needsRestart((k) => k === "target" || k === "diagnostics.mode"), false);
});

test("initializationOptions carry target, diagnostics mode and threshold under `tirkit`", () => {
  const s = readSettings(reader({ target: "h100", "diagnostics.mode": "onChange", "constants.inlineThreshold": 9 })).settings;
  assert.deepEqual(initializationOptions(s), {
    tirkit: { target: "h100", diagnostics: { mode: "onChange" }, constants: { inlineThreshold: 9 } },
  });
});

test("initializationOptions leave out unset target and threshold, so the project file applies", () => {
  const s = readSettings(reader({})).settings;
  assert.deepEqual(initializationOptions(s), { tirkit: { diagnostics: { mode: "onSave" } } });
});

test("probe: python launches import the module, command launches ask for --help", () => {
  const py = resolveLaunch(readSettings(reader({})).settings, ["conda", "run", "-n", "k", "python"]);
  const p = probeFor(py);
  assert.equal(p.command, "conda");
  assert.deepEqual(p.args.slice(0, 5), ["run", "-n", "k", "python", "-c"]);
  assert.match(p.args[5], /^import sys, tirkit_lsp, tirkit_lsp\.server;/);
  const cmd = resolveLaunch(readSettings(reader({ "server.command": ["tirkit-lsp"] })).settings);
  assert.deepEqual(probeFor(cmd), { command: "tirkit-lsp", args: ["--help"] });
});

test("probe verdicts: missing interpreter, missing module, other failure, success", () => {
  const l = resolveLaunch(readSettings(reader({ "server.pythonPath": "/opt/py 3/python" })).settings);
  const noProgram = interpretProbe(l, { spawnError: "ENOENT" });
  assert.equal(noProgram.ok, false);
  if (!noProgram.ok) {
    assert.equal(noProgram.kind, "no-program");
    assert.ok(noProgram.message.includes(`'/opt/py 3/python' -m pip install "tirkit[lsp]"`), noProgram.message);
  }
  const noModule = interpretProbe(l, { exitCode: 1, stderr: "Traceback...\nModuleNotFoundError: No module named 'tirkit_lsp'\n" });
  assert.equal(noModule.ok, false);
  if (!noModule.ok) {
    assert.equal(noModule.kind, "no-module");
    assert.ok(noModule.message.includes("pip install"));
    assert.ok(!noModule.message.includes("Traceback"));
  }
  const noPygls = interpretProbe(l, { exitCode: 1, stderr: "Traceback...\nModuleNotFoundError: No module named 'pygls'\n" });
  assert.ok(!noPygls.ok && noPygls.kind === "no-module" && noPygls.message.includes("no module pygls")
    && noPygls.message.includes('-m pip install "tirkit[lsp]"'), JSON.stringify(noPygls));
  const broken = interpretProbe(l, { exitCode: 1, stderr: "Traceback\nImportError: cannot import name 'x' from 'lark'\n" });
  assert.equal(broken.ok, false);
  if (!broken.ok) {
    assert.equal(broken.kind, "failed");
    assert.ok(broken.message.includes("ImportError: cannot import name 'x' from 'lark'"));
  }
  assert.deepEqual(interpretProbe(l, { exitCode: 0, stdout: "0.3.1" }), { ok: true, version: "0.3.1" });
  assert.deepEqual(interpretProbe(l, { exitCode: 0, stdout: "?" }), { ok: true, version: undefined });
  assert.deepEqual(interpretProbe(l, { timedOut: true }), { ok: true });
});

test("install command for an explicit server command uses python3", () => {
  const l = resolveLaunch(readSettings(reader({ "server.command": ["/nowhere/tirkit-lsp"] })).settings);
  assert.equal(installCommand(l), `python3 -m pip install "tirkit[lsp]"`);
  const v = interpretProbe(l, { spawnError: "ENOENT" });
  assert.ok(!v.ok && v.message.includes("`/nowhere/tirkit-lsp` was not found"));
});

test("status bar text shows the target while running and the state otherwise", () => {
  assert.equal(statusItem("running", "cuda").text, "$(check) tirkit: cuda");
  assert.equal(statusItem("missing", "cuda").text, "$(warning) tirkit: not installed");
  assert.equal(statusItem("starting", "llvm").text, "$(sync~spin) tirkit: starting");
  const t = statusItem("failed", "llvm", "exit code 2").tooltip;
  assert.ok(t.includes("target: llvm") && t.includes("exit code 2"));
  assert.equal(statusItem("running", null).text, "$(check) tirkit: project target");
  assert.ok(statusItem("running", null).tooltip.includes("from the project configuration"));
});

test("server commands are used only when the server announces them", () => {
  assert.equal(serverHasCommand(["tirkit.showTrace"], SERVER_COMMANDS.showTrace), true);
  assert.equal(serverHasCommand(["tirkit.showTrace"], SERVER_COMMANDS.canonicalForm), false);
  assert.equal(serverHasCommand(undefined, SERVER_COMMANDS.showTrace), false);
});

test("command results: strings and text fields open a document, empty answers a message", () => {
  const trace = "sch = tirkit.Schedule(mod)\nsch.split(...)";
  const trace_ = (content: string) => ({ kind: "document", language: "python", content, title: "schedule trace" });
  assert.deepEqual(displayCommandResult(SERVER_COMMANDS.showTrace, trace, "none"), trace_(trace + "\n"));
  assert.deepEqual(displayCommandResult(SERVER_COMMANDS.showTrace, { python: "a = 1\n" }, "none"), trace_("a = 1\n"));
  assert.deepEqual(displayCommandResult(SERVER_COMMANDS.canonicalForm, { text: "x", language: "python", kernel: "matmul" }, "none"),
    { kind: "document", language: "python", content: "x\n", title: "matmul (canonical form)" });
  assert.deepEqual(displayCommandResult(SERVER_COMMANDS.showTrace, ["l1", "l2"], "none"), trace_("l1\nl2\n"));
  assert.deepEqual(displayCommandResult(SERVER_COMMANDS.showTrace, { lines: ["a", "b"] }, "none"), trace_("a\nb\n"));
  assert.deepEqual(displayCommandResult(SERVER_COMMANDS.showTrace, null, "no steps"), { kind: "message", message: "no steps" });
  assert.deepEqual(displayCommandResult(SERVER_COMMANDS.showTrace, "  \n", "no steps"), { kind: "message", message: "no steps" });
  assert.deepEqual(displayCommandResult(SERVER_COMMANDS.canonicalForm, { message: "no kernel here" }, "none"),
    { kind: "message", message: "tirkit: no kernel here" });
  const other = displayCommandResult(SERVER_COMMANDS.showTrace, { steps: 3 }, "none");
  assert.equal(other.kind, "document");
  assert.ok(other.kind === "document" && other.language === "json" && other.content.includes('"steps": 3'));
});

test("method-not-found and unknown-command errors are recognised as a missing command", () => {
  assert.equal(isMissingCommandError({ code: -32601, message: "Method Not Found" }), true);
  assert.equal(isMissingCommandError({ code: -32603, message: "Unknown command: tirkit.showTrace" }), true);
  assert.equal(isMissingCommandError({ code: -32603, message: "Command 'tirkit.showTrace' not found" }), true);
  // pygls answers an unregistered command with invalid params and this message
  assert.equal(isMissingCommandError({ code: -32602, message: "Command name 'tirkit.showTrace' is not defined" }), true);
  assert.equal(isMissingCommandError({ code: -32603, message: "division by zero" }), false);
  assert.equal(isMissingCommandError(undefined), false);
});

test("views of command answers get a readable name and the language's extension", () => {
  assert.equal(viewPath("matmul (canonical form)", "python"), "/matmul (canonical form).py");
  assert.equal(viewPath("a/b:c", "json"), "/a_b_c.json");
  assert.equal(viewPath("", "plaintext"), "/tirkit.txt");
});
