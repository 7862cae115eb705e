// The tirkit VS Code extension: a thin client that starts `tirkit-lsp` over stdio for Python
// files.  All analysis lives in the server; this file wires settings, commands and the status bar.
import { spawn } from "child_process";
import * as vscode from "vscode";
import {
  LanguageClient,
  LanguageClientOptions,
  RevealOutputChannelOn,
  ServerOptions,
  State,
  TextEdit,
  TransportKind,
} from "vscode-languageclient/node";
import {
  Launch,
  ProbeOutcome,
  SERVER_COMMANDS,
  ServerState,
  Settings,
  describeLaunch,
  displayCommandResult,
  initializationOptions,
  installCommand,
  interpretProbe,
  isMissingCommandError,
  missingCommandMessage,
  needsRestart,
  probeFor,
  readSettings,
  resolveLaunch,
  serverHasCommand,
  statusItem,
  viewPath,
} from "./config";

const SELECTOR = [
  { scheme: "file", language: "python" },
  { scheme: "untitled", language: "python" },
];

let client: LanguageClient | undefined;
let output: vscode.OutputChannel;
let status: vscode.StatusBarItem;
let settings: Settings;
let serverVersion: string | undefined;
let state: ServerState = "stopped";
let stateDetail: string | undefined;
let starting: Promise<void> | undefined;

/** Read-only documents that show what server commands answered (canonical form, trace). */
const VIEW_SCHEME = "tirkit-view";
const views = new Map<string, string>();
const viewChanged = new vscode.EventEmitter<vscode.Uri>();

function loadSettings(): Settings {
  const cfg = vscode.workspace.getConfiguration("tirkit");
  const { settings: s, problems } = readSettings((key) => cfg.get(key));
  for (const p of problems) {
    output.appendLine(p);
    void vscode.window.showWarningMessage(p);
  }
  return s;
}

function setState(s: ServerState, detail?: string): void {
  state = s;
  stateDetail = detail;
  const { text, tooltip } = statusItem(s, settings.target, detail);
  status.text = text;
  status.tooltip = tooltip;
  status.backgroundColor = s === "missing" || s === "failed"
    ? new vscode.ThemeColor("statusBarItem.warningBackground") : undefined;
  status.show();
}

/** The exec command of the interpreter selected in the Python extension, when it is installed. */
async function pythonExtensionInterpreter(): Promise<string[] | undefined> {
  const ext = vscode.extensions.getExtension("ms-python.python");
  if (!ext) return undefined;
  try {
    const api: any = ext.isActive ? ext.exports : await ext.activate();
    const resource = vscode.workspace.workspaceFolders?.[0]?.uri;
    const details = api?.settings?.getExecutionDetails?.(resource);
    if (Array.isArray(details?.execCommand) && details.execCommand.length > 0) return details.execCommand;
    const env = await api?.environments?.getActiveEnvironmentPath?.(resource);
    if (typeof env?.path === "string" && env.path) return [env.path];
  } catch (e) {
    output.appendLine(`tirkit: could not ask the Python extension for its interpreter: ${e}`);
  }
  return undefined;
}

function probe(launch: Launch): Promise<ProbeOutcome> {
  const { command, args } = probeFor(launch);
  return new Promise((resolve) => {
    let stdout = "";
    let stderr = "";
    let done = false;
    const finish = (o: ProbeOutcome) => { if (!done) { done = true; clearTimeout(timer); resolve(o); } };
    // stdin is closed, so a server that ignores --help sees end of input and exits
    const child = spawn(command, args, { env: process.env, stdio: ["ignore", "pipe", "pipe"] });
    const timer = setTimeout(() => { child.kill(); finish({ timedOut: true }); }, 15000);
    child.stdout?.on("data", (d) => { stdout += d; });
    child.stderr?.on("data", (d) => { stderr += d; });
    child.on("error", (e: NodeJS.ErrnoException) => finish({ spawnError: e.code ?? String(e) }));
    child.on("close", (code) => finish({ exitCode: code, stdout, stderr }));
  });
}

async function startServer(): Promise<void> {
  settings = loadSettings();
  const launch = resolveLaunch(settings, settings.pythonPath || settings.serverCommand.length
    ? undefined : await pythonExtensionInterpreter());
  output.appendLine(`tirkit: server command: ${describeLaunch(launch)} (from ${launch.source})`);
  setState("starting", describeLaunch(launch));

  const verdict = interpretProbe(launch, await probe(launch));
  if (!verdict.ok) {
    output.appendLine(verdict.message);
    setState(verdict.kind === "failed" ? "failed" : "missing", verdict.message);
    const copy = "Copy Install Command";
    const open = "Open Settings";
    void vscode.window.showErrorMessage(verdict.message, copy, open).then((choice) => {
      if (choice === copy) void vscode.env.clipboard.writeText(installCommand(launch));
      if (choice === open) void vscode.commands.executeCommand("workbench.action.openSettings", "tirkit.server");
    });
    return;
  }
  serverVersion = verdict.version;

  const serverOptions: ServerOptions = {
    command: launch.command,
    args: launch.args,
    transport: TransportKind.stdio,
    options: { env: process.env },
  };
  const clientOptions: LanguageClientOptions = {
    documentSelector: SELECTOR,
    outputChannel: output,
    revealOutputChannelOn: RevealOutputChannelOn.Never,
    initializationOptions: initializationOptions(settings),
    synchronize: { configurationSection: "tirkit" },
  };
  const c = new LanguageClient("tirkit", "tirkit", serverOptions, clientOptions);
  c.onDidChangeState((e) => {
    if (c !== client) return;
    if (e.newState === State.Running) setState("running", serverVersion ? `version ${serverVersion}` : undefined);
    else if (e.newState === State.Starting) setState("starting");
    else setState("stopped");
  });
  client = c;
  try {
    await c.start();
    setState("running", serverVersion ? `version ${serverVersion}` : undefined);
  } catch (e) {
    const msg = `tirkit: the language server did not start: ${e instanceof Error ? e.message : e}`;
    output.appendLine(msg);
    setState("failed", msg);
    void vscode.window.showErrorMessage(`${msg}. See the 'tirkit' output for details; install with: ${installCommand(launch)}`);
  }
}

async function stopServer(): Promise<void> {
  const c = client;
  client = undefined;
  if (c) {
    try {
      await c.stop(5000);
    } catch (e) {
      output.appendLine(`tirkit: stopping the server: ${e}`);
    }
  }
  setState("stopped");
}

async function restartServer(): Promise<void> {
  if (starting) await starting;
  starting = (async () => {
    await stopServer();
    await startServer();
  })();
  try {
    await starting;
  } finally {
    starting = undefined;
  }
}

function runningClient(): LanguageClient | undefined {
  if (client && client.isRunning()) return client;
  void vscode.window.showWarningMessage(
    state === "missing" ? `tirkit: the language server is not installed. ${stateDetail ?? ""}`
      : "tirkit: the language server is not running; use 'tirkit: Restart Language Server'.");
  return undefined;
}

async function formatKernels(): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  const c = runningClient();
  if (!editor || !c) return;
  const doc = editor.document;
  const opts = editor.options;
  const edits = await c.sendRequest("textDocument/formatting", {
    textDocument: { uri: c.code2ProtocolConverter.asUri(doc.uri) },
    options: { tabSize: Number(opts.tabSize) || 4, insertSpaces: opts.insertSpaces !== false },
  });
  const converted = await c.protocol2CodeConverter.asTextEdits((edits ?? []) as TextEdit[]);
  if (converted.length === 0) {
    void vscode.window.setStatusBarMessage("tirkit: kernels already in canonical form", 3000);
    return;
  }
  const we = new vscode.WorkspaceEdit();
  we.set(doc.uri, converted);
  await vscode.workspace.applyEdit(we);
}

/** Send a `workspace/executeCommand` to the server and show its answer. */
async function serverCommand(name: string, args: unknown[], emptyMessage: string): Promise<void> {
  const c = runningClient();
  if (!c) return;
  const announced = c.initializeResult?.capabilities.executeCommandProvider?.commands;
  if (!serverHasCommand(announced, name)) {
    void vscode.window.showWarningMessage(missingCommandMessage(name, serverVersion));
    return;
  }
  let result: unknown;
  try {
    result = await c.sendRequest("workspace/executeCommand", { command: name, arguments: args });
  } catch (e) {
    if (isMissingCommandError(e)) void vscode.window.showWarningMessage(missingCommandMessage(name, serverVersion));
    else void vscode.window.showErrorMessage(`tirkit: ${name} failed: ${e instanceof Error ? e.message : e}`);
    return;
  }
  const shown = displayCommandResult(name, result, emptyMessage);
  if (shown.kind === "message") {
    void vscode.window.showInformationMessage(shown.message);
    return;
  }
  const uri = vscode.Uri.from({ scheme: VIEW_SCHEME, path: viewPath(shown.title ?? name, shown.language) });
  views.set(uri.toString(), shown.content);
  viewChanged.fire(uri);
  const doc = await vscode.workspace.openTextDocument(uri);
  await vscode.window.showTextDocument(doc, { viewColumn: vscode.ViewColumn.Beside, preview: true });
}

async function showScheduleTrace(): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  const uri = editor ? client?.code2ProtocolConverter.asUri(editor.document.uri) : undefined;
  await serverCommand(SERVER_COMMANDS.showTrace, uri ? [uri] : [],
    "tirkit: no schedule steps applied to this file since it was opened.");
}

async function showCanonicalForm(): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  if (!editor) {
    void vscode.window.showInformationMessage("tirkit: open a file with a kernel first.");
    return;
  }
  const c = client;
  const uri = c ? c.code2ProtocolConverter.asUri(editor.document.uri) : editor.document.uri.toString();
  const pos = editor.selection.active;
  await serverCommand(SERVER_COMMANDS.canonicalForm, [uri, { line: pos.line, character: pos.character }],
    "tirkit: no kernel under the cursor.");
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  output = vscode.window.createOutputChannel("tirkit");
  status = vscode.window.createStatusBarItem("tirkit.status", vscode.StatusBarAlignment.Left, 0);
  status.name = "tirkit";
  status.command = "tirkit.showMenu";
  settings = readSettings((key) => vscode.workspace.getConfiguration("tirkit").get(key)).settings;
  context.subscriptions.push(output, status, viewChanged);
  context.subscriptions.push(vscode.workspace.registerTextDocumentContentProvider(VIEW_SCHEME, {
    onDidChange: viewChanged.event,
    provideTextDocumentContent: (uri) => views.get(uri.toString()) ?? "",
  }));

  context.subscriptions.push(
    vscode.commands.registerCommand("tirkit.restartServer", restartServer),
    vscode.commands.registerCommand("tirkit.formatKernels", formatKernels),
    vscode.commands.registerCommand("tirkit.showScheduleTrace", showScheduleTrace),
    vscode.commands.registerCommand("tirkit.showCanonicalForm", showCanonicalForm),
    vscode.commands.registerCommand("tirkit.showMenu", async () => {
      const items = [
        { label: "$(output) Show server log", id: "log" },
        { label: "$(debug-restart) Restart language server", id: "tirkit.restartServer" },
        { label: "$(gear) Settings", id: "settings" },
      ];
      const pick = await vscode.window.showQuickPick(items, { placeHolder: status.tooltip as string });
      if (!pick) return;
      if (pick.id === "log") output.show(true);
      else if (pick.id === "settings") void vscode.commands.executeCommand("workbench.action.openSettings", "tirkit");
      else void vscode.commands.executeCommand(pick.id);
    }),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (!e.affectsConfiguration("tirkit")) return;
      if (needsRestart((k) => e.affectsConfiguration(`tirkit.${k}`))) {
        void restartServer();
      } else {
        settings = loadSettings();
        setState(state, stateDetail);   // the target shown in the status bar
      }
    }),
  );
  await restartServer();
  await followPythonInterpreter(context);
}

/** Restart when the interpreter selected in the Python extension changes and it is the one used. */
async function followPythonInterpreter(context: vscode.ExtensionContext): Promise<void> {
  const ext = vscode.extensions.getExtension("ms-python.python");
  if (!ext) return;
  try {
    const api: any = ext.isActive ? ext.exports : await ext.activate();
    const event = api?.settings?.onDidChangeExecutionDetails;
    if (typeof event !== "function") return;
    context.subscriptions.push(event(() => {
      if (!settings.pythonPath && settings.serverCommand.length === 0) void restartServer();
    }));
  } catch (e) {
    output.appendLine(`tirkit: cannot follow the Python extension's interpreter: ${e}`);
  }
}

export async function deactivate(): Promise<void> {
  await stopServer();
}
