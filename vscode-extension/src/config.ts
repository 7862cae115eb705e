// Configuration handling for the tirkit extension: pure functions, no `vscode` import, so that
// they run (and are unit-tested) under plain Node.

export type DiagnosticsMode = "onChange" | "onSave";
export type TraceLevel = "off" | "messages" | "verbose";

export interface Settings {
  /** Explicit server command (program and arguments); empty: run `-m tirkit_lsp` with Python. */
  serverCommand: string[];
  /** Interpreter for `-m tirkit_lsp`; empty: the Python extension's choice, else `python3`. */
  pythonPath: string;
  /** null: not set in the editor; the project file (`[tool.tirkit]`) or the server decides. */
  target: string | null;
  diagnosticsMode: DiagnosticsMode;
  /** null: not set in the editor; the project file or the server's default (64) decides. */
  inlineThreshold: number | null;
  trace: TraceLevel;
}

export const DEFAULTS: Readonly<Settings> = Object.freeze({
  serverCommand: [],
  pythonPath: "",
  target: null,
  diagnosticsMode: "onSave",
  inlineThreshold: null,
  trace: "off",
});

/** A settings reader: `get("server.command")` returns the value under `tirkit.server.command`. */
export type SettingsReader = (key: string) => unknown;

export const SETTING_KEYS = {
  serverCommand: "server.command",
  pythonPath: "server.pythonPath",
  target: "target",
  diagnosticsMode: "diagnostics.mode",
  inlineThreshold: "constants.inlineThreshold",
  trace: "trace.server",
} as const;

/** Settings whose change needs the server restarted (the others are sent to it live). */
export const RESTART_KEYS = [SETTING_KEYS.serverCommand, SETTING_KEYS.pythonPath];

export interface ReadResult {
  settings: Settings;
  /** One line per value that was ignored because it was invalid (shown to the user). */
  problems: string[];
}

function isStringArray(v: unknown): v is string[] {
  return Array.isArray(v) && v.every((x) => typeof x === "string");
}

/** Split a command line given as one string ("tirkit-lsp --log-level INFO") into words;
 *  double or single quotes group words that contain spaces. */
export function splitCommandLine(line: string): string[] {
  const out: string[] = [];
  let cur = "";
  let quote: string | null = null;
  let any = false;
  for (const ch of line) {
    if (quote) {
      if (ch === quote) quote = null;
      else cur += ch;
    } else if (ch === '"' || ch === "'") {
      quote = ch;
      any = true;
    } else if (/\s/.test(ch)) {
      if (any || cur) out.push(cur);
      cur = "";
      any = false;
    } else {
      cur += ch;
    }
  }
  if (any || cur) out.push(cur);
  return out;
}

/** Read and validate the `tirkit.*` settings; invalid values fall back to the defaults. */
export function readSettings(get: SettingsReader): ReadResult {
  const problems: string[] = [];
  const s: Settings = { ...DEFAULTS, serverCommand: [] };

  const cmd = get(SETTING_KEYS.serverCommand);
  if (typeof cmd === "string") {
    s.serverCommand = splitCommandLine(cmd.trim());
  } else if (isStringArray(cmd)) {
    s.serverCommand = cmd.map((x) => x.trim()).filter((x) => x.length > 0);
  } else if (cmd !== undefined && cmd !== null) {
    problems.push(`tirkit.${SETTING_KEYS.serverCommand} must be a list of strings; ignored.`);
  }

  const py = get(SETTING_KEYS.pythonPath);
  if (typeof py === "string") s.pythonPath = py.trim();
  else if (py !== undefined && py !== null) {
    problems.push(`tirkit.${SETTING_KEYS.pythonPath} must be a string; ignored.`);
  }

  const target = get(SETTING_KEYS.target);
  if (typeof target === "string" && target.trim()) s.target = target.trim();
  else if (target !== undefined && target !== null && target !== "") {
    problems.push(`tirkit.${SETTING_KEYS.target} must be a target name such as "llvm" or "cuda"; using the project's target.`);
  }

  const mode = get(SETTING_KEYS.diagnosticsMode);
  if (mode === "onChange" || mode === "onSave") s.diagnosticsMode = mode;
  else if (mode !== undefined && mode !== null) {
    problems.push(`tirkit.${SETTING_KEYS.diagnosticsMode} must be "onChange" or "onSave"; using "${DEFAULTS.diagnosticsMode}".`);
  }

  const thr = get(SETTING_KEYS.inlineThreshold);
  if (typeof thr === "number" && Number.isInteger(thr) && thr >= 0) s.inlineThreshold = thr;
  else if (thr !== undefined && thr !== null) {
    problems.push(`tirkit.${SETTING_KEYS.inlineThreshold} must be a whole number >= 0; using the project's threshold.`);
  }

  const trace = get(SETTING_KEYS.trace);
  if (trace === "off" || trace === "messages" || trace === "verbose") s.trace = trace;
  else if (trace !== undefined && trace !== null) {
    problems.push(`tirkit.${SETTING_KEYS.trace} must be "off", "messages" or "verbose"; using "off".`);
  }
  return { settings: s, problems };
}

/** Whether a configuration change (given as "does it affect `tirkit.<key>`?") needs a restart. */
export function needsRestart(affects: (key: string) => boolean): boolean {
  return RESTART_KEYS.some((k) => affects(k));
}

export type LaunchSource = "command" | "pythonPath" | "pythonExtension" | "default";

export interface Launch {
  command: string;
  args: string[];
  source: LaunchSource;
  /** The interpreter's command words, when the server runs as `python -m tirkit_lsp`. */
  python?: string[];
}

export const SERVER_MODULE = "tirkit_lsp";

/**
 * How to start the server.  Order: the explicit command; the configured interpreter; the
 * interpreter selected in the Python extension (`pythonExtension`, its exec command, e.g.
 * `["conda", "run", "-n", "x", "python"]` or `["/venv/bin/python"]`); `python3`.
 */
export function resolveLaunch(s: Settings, pythonExtension?: string[] | null): Launch {
  if (s.serverCommand.length > 0) {
    const [command, ...args] = s.serverCommand;
    return { command, args, source: "command" };
  }
  const stdio = ["-m", SERVER_MODULE, "--stdio"];
  if (s.pythonPath) {
    return { command: s.pythonPath, args: stdio, source: "pythonPath", python: [s.pythonPath] };
  }
  const ext = (pythonExtension ?? []).filter((x) => typeof x === "string" && x.length > 0);
  if (ext.length > 0) {
    const [command, ...pre] = ext;
    return { command, args: [...pre, ...stdio], source: "pythonExtension", python: ext };
  }
  return { command: "python3", args: stdio, source: "default", python: ["python3"] };
}

/** A shell-readable rendering of a command line (for messages and tooltips). */
export function quoteCommand(words: string[]): string {
  return words.map((w) => (/^[\w@%+=:,./-]+$/.test(w) ? w : `'${w.replace(/'/g, `'\\''`)}'`)).join(" ");
}

export function describeLaunch(l: Launch): string {
  return quoteCommand([l.command, ...l.args]);
}

/** The initializationOptions sent to tirkit-lsp (it also reads `workspace/configuration`).
 *  Only the settings the user set are sent, so that the project file's keys apply otherwise. */
export function initializationOptions(s: Settings): Record<string, unknown> {
  const tirkit: Record<string, unknown> = { diagnostics: { mode: s.diagnosticsMode } };
  if (s.target !== null) tirkit.target = s.target;
  if (s.inlineThreshold !== null) tirkit.constants = { inlineThreshold: s.inlineThreshold };
  return { tirkit };
}

// ---------------------------------------------------------------- is the server installed?

/** A quick run that tells whether the server can start, before the client starts it. */
export function probeFor(l: Launch): { command: string; args: string[] } {
  if (l.source === "command") return { command: l.command, args: [...l.args, "--help"] };
  const pre = l.args.slice(0, l.args.indexOf("-m"));
  return {
    command: l.command,
    // the server module imports pygls, lsprotocol and tirkit: a missing dependency shows here
    args: [...pre, "-c", `import sys, ${SERVER_MODULE}, ${SERVER_MODULE}.server; sys.stdout.write(getattr(${SERVER_MODULE}, "__version__", "?"))`],
  };
}

export interface ProbeOutcome {
  /** errno-style code when the program could not be started at all (e.g. "ENOENT"). */
  spawnError?: string;
  exitCode?: number | null;
  stdout?: string;
  stderr?: string;
  timedOut?: boolean;
}

export type ProbeVerdict =
  | { ok: true; version?: string }
  | { ok: false; kind: "no-program" | "no-module" | "failed"; message: string };

/** The install command shown when the server is missing. */
export function installCommand(l: Launch): string {
  const py = l.python && l.source !== "command" ? quoteCommand(l.python) : "python3";
  return `${py} -m pip install "tirkit[lsp]"`;
}

export function interpretProbe(l: Launch, o: ProbeOutcome): ProbeVerdict {
  const install = installCommand(l);
  if (o.timedOut) {
    // A slow start is not a missing server: let the client try.
    return { ok: true };
  }
  if (o.spawnError) {
    const what = l.source === "command"
      ? `the server command \`${l.command}\` was not found`
      : `the Python interpreter \`${l.command}\` was not found`;
    return {
      ok: false, kind: "no-program",
      message: `tirkit: ${what}. Install the language server with: ${install} — or set "tirkit.server.command" / "tirkit.server.pythonPath".`,
    };
  }
  if (o.exitCode === 0) {
    const v = (o.stdout ?? "").trim();
    return l.source === "command" ? { ok: true } : { ok: true, version: v && v !== "?" ? v : undefined };
  }
  const err = o.stderr ?? "";
  const missing = /No module named ['"]?([\w.]+)/.exec(err);
  if (missing && /^(tirkit|pygls|lsprotocol|lark)/.test(missing[1])) {
    return {
      ok: false, kind: "no-module",
      message: missing[1].startsWith("tirkit")
        ? `tirkit: the language server (tirkit-lsp) is not installed for \`${quoteCommand(l.python ?? [l.command])}\`. Install it with: ${install}`
        : `tirkit: tirkit-lsp is installed for \`${quoteCommand(l.python ?? [l.command])}\` without its dependencies (no module ${missing[1]}). Install them with: ${install}`,
    };
  }
  const last = err.trim().split(/\r?\n/).filter((x) => x.trim()).pop() ?? `exit code ${o.exitCode}`;
  return {
    ok: false, kind: "failed",
    message: `tirkit: \`${describeLaunch(l)}\` cannot start (${last}). Reinstall with: ${install}`,
  };
}

// ---------------------------------------------------------------- status bar

export type ServerState = "starting" | "running" | "stopped" | "missing" | "failed";

export function statusItem(state: ServerState, target: string | null, detail?: string): { text: string; tooltip: string } {
  const icon = { starting: "$(sync~spin)", running: "$(check)", stopped: "$(circle-slash)", missing: "$(warning)", failed: "$(error)" }[state];
  const label = { starting: "starting", running: "running", stopped: "stopped", missing: "not installed", failed: "failed" }[state];
  const shown = target ?? "project target";
  const text = state === "running" ? `${icon} tirkit: ${shown}` : `${icon} tirkit: ${label}`;
  const lines = [`tirkit-lsp ${label}`,
    target === null ? "target: from the project configuration (`tirkit config`), else llvm" : `target: ${target}`];
  if (detail) lines.push(detail);
  lines.push("Click for the server log and commands");
  return { text, tooltip: lines.join("\n") };
}

// ---------------------------------------------------------------- server commands

export const SERVER_COMMANDS = {
  showTrace: "tirkit.showTrace",
  canonicalForm: "tirkit.canonicalForm",
} as const;

/** Whether the server announced `name` in its executeCommandProvider capability. */
export function serverHasCommand(commands: readonly string[] | undefined, name: string): boolean {
  return Array.isArray(commands) && commands.includes(name);
}

export function missingCommandMessage(name: string, serverVersion?: string): string {
  const v = serverVersion ? ` ${serverVersion}` : "";
  return `tirkit: this tirkit-lsp${v} does not provide \`${name}\`. Update it (pip install -U "tirkit[lsp]") and restart the server.`;
}

export type CommandDisplay =
  | { kind: "document"; language: string; content: string; title?: string }
  | { kind: "message"; message: string };

/**
 * Turn what the server answered to `workspace/executeCommand` into something to show: text
 * (a string, or an object with `text` / `python` / `trace` / `script` / `lines`) opens in a
 * document; an empty answer gives a message saying so.
 */
export function displayCommandResult(name: string, result: unknown, emptyMessage: string): CommandDisplay {
  let text: string | undefined;
  let language = name === SERVER_COMMANDS.canonicalForm || name === SERVER_COMMANDS.showTrace ? "python" : "plaintext";
  if (typeof result === "string") text = result;
  else if (isStringArray(result)) text = result.join("\n");
  else if (result && typeof result === "object") {
    const r = result as Record<string, unknown>;
    for (const key of ["text", "python", "trace", "script", "source", "content"]) {
      if (typeof r[key] === "string") { text = r[key] as string; break; }
    }
    if (text === undefined && isStringArray(r.lines)) text = r.lines.join("\n");
    if (text === undefined && typeof r.message === "string") return { kind: "message", message: `tirkit: ${r.message}` };
    if (typeof r.language === "string") language = r.language;
    if (text === undefined) { text = JSON.stringify(result, null, 2); language = "json"; }
  }
  if (text === undefined || text.trim() === "") return { kind: "message", message: emptyMessage };
  const kernel = result && typeof result === "object" && !Array.isArray(result)
    && typeof (result as Record<string, unknown>).kernel === "string" ? (result as Record<string, string>).kernel : undefined;
  const title = name === SERVER_COMMANDS.canonicalForm ? `${kernel ?? "kernel"} (canonical form)`
    : name === SERVER_COMMANDS.showTrace ? "schedule trace" : name;
  return { kind: "document", language, content: text.endsWith("\n") ? text : text + "\n", title };
}

/** JSON-RPC "method not found" / unknown-command answers mean the server lacks the command. */
export function isMissingCommandError(err: unknown): boolean {
  if (!err || typeof err !== "object") return false;
  const e = err as { code?: unknown; message?: unknown };
  if (e.code === -32601) return true;
  return typeof e.message === "string" && /(command|method).*(not|isn't) (found|supported|registered|defined)|unknown command/i.test(e.message);
}

const EXTENSIONS: Record<string, string> = { python: ".py", json: ".json", plaintext: ".txt" };

/** The path of the read-only view that shows a command's answer: a name the user can read in
 *  the tab, with the extension that gives the language. */
export function viewPath(title: string, language: string): string {
  const safe = title.replace(/[\\/:*?"<>|#%]+/g, "_").trim() || "tirkit";
  return `/${safe}${EXTENSIONS[language] ?? ".txt"}`;
}
