// End-to-end test of the tirkit extension in a real VS Code (code-server in headless Chromium).
//
// node e2e/run.mjs --code-server DIR --vsix FILE --python PY --invalid FILE --valid FILE
//                  [--on-save FILE] [--artifacts DIR] [--schedule-actions yes|no|auto]
//
// Starts code-server on 127.0.0.1 with a fresh profile, installs the .vsix, opens a workspace
// holding copies of the example files, and drives the workbench with playwright-core, in the
// extension's default settings (diagnostics of the full rule set on save):
//   1. the invalid example gets an error squiggle and a Problems entry with its `# expect:` code;
//      the on-save example has no squiggle until it is edited and saved, then its codes appear;
//   2. hover on the block of the valid example shows its signature and FLOPs;
//   3. Ctrl+. at a loop lists schedule actions and applying one edits the file (when the build
//      has them; `auto` checks what is offered and says so when there is none);
//   4. the status bar shows the server state and target; the canonical-form command answers.
// Screenshots go to the artifacts folder.  Exits 0 when every check passed, 1 otherwise; the
// last line is "N passed, N failed" (", N skipped").
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { chromium } from "playwright-core";

const argv = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1] : dflt;
};
const CS_DIR = opt("code-server");
const VSIX = opt("vsix");
const PYTHON = opt("python", "python3");
const INVALID = opt("invalid");
const VALID = opt("valid");
const ON_SAVE = opt("on-save");
const ARTIFACTS = path.resolve(opt("artifacts", ".artifacts/vscode-e2e"));
const SCHEDULE = opt("schedule-actions", "auto");
const CHROMIUM = opt("chromium", "/usr/bin/chromium");
const TOTAL_TIMEOUT_MS = Number(opt("timeout-ms", "150000"));
for (const [k, v] of Object.entries({ "code-server": CS_DIR, vsix: VSIX, invalid: INVALID, valid: VALID })) {
  if (!v) { console.error(`missing --${k}`); process.exit(2); }
}

const results = { passed: 0, failed: 0, skipped: 0 };
const t0 = Date.now();
const log = (...a) => console.log(`[${((Date.now() - t0) / 1000).toFixed(1).padStart(5)}s]`, ...a);
function pass(name, detail = "") { results.passed++; log(`PASS ${name}${detail ? ": " + detail : ""}`); }
function fail(name, detail) { results.failed++; log(`FAIL ${name}: ${detail}`); }
function skip(name, why) { results.skipped++; log(`SKIP ${name}: ${why}`); }
/** Run one check; an exception fails that check only, the next one still runs. */
async function step(name, fn) {
  try { await fn(); } catch (e) { fail(name, (e?.message ?? String(e)).split("\n")[0]); }
}

/** `# expect: CODE` comments of an example: [{line, code}] (1-based lines). */
function expectations(file) {
  return fs.readFileSync(file, "utf8").split("\n").flatMap((l, i) => {
    const m = /#\s*expect:\s*(\S+)/.exec(l);
    return m ? [{ line: i + 1, code: m[1] }] : [];
  });
}

async function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.listen(0, "127.0.0.1", () => { const { port } = s.address(); s.close(() => resolve(port)); });
    s.on("error", reject);
  });
}

async function waitHealthy(url, ms) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    try { const r = await fetch(url); if (r.ok) return true; } catch { /* not up yet */ }
    await new Promise((r) => setTimeout(r, 250));
  }
  return false;
}

const work = fs.mkdtempSync(path.join(os.tmpdir(), "tirkit-e2e-"));
const userData = path.join(work, "user-data");
const extDir = path.join(work, "extensions");
const ws = path.join(work, "workspace");
fs.mkdirSync(path.join(userData, "User"), { recursive: true });
fs.mkdirSync(path.join(ws, ".vscode"), { recursive: true });
fs.mkdirSync(ARTIFACTS, { recursive: true });
const invalidName = path.basename(INVALID);
const validName = path.basename(VALID);
fs.copyFileSync(INVALID, path.join(ws, invalidName));
fs.copyFileSync(VALID, path.join(ws, validName));
const onSaveName = ON_SAVE ? path.basename(ON_SAVE) : null;
if (ON_SAVE) fs.copyFileSync(ON_SAVE, path.join(ws, onSaveName));
// A copy of the valid example with its spacing disturbed, for the Format Kernels command.
const messyName = `messy_${validName}`;
const validText = fs.readFileSync(VALID, "utf8");
const messyText = validText.split("\n").map((l) => (/T\.grid\(|T\.Buffer\(/.test(l) ? l.replace(/, /g, ",") : l.replace(/ \+ /g, "+"))).join("\n");
fs.writeFileSync(path.join(ws, messyName), messyText);
const commonSettings = {
  "workbench.startupEditor": "none",
  "workbench.tips.enabled": false,
  "workbench.enableExperiments": false,
  "telemetry.telemetryLevel": "off",
  "extensions.ignoreRecommendations": true,
  "extensions.autoCheckUpdates": false,
  "extensions.autoUpdate": false,
  "update.mode": "none",
  "security.workspace.trust.enabled": false,
  "editor.hover.delay": 200,
  "editor.hover.above": false,
  "editor.minimap.enabled": false,
  "window.commandCenter": false,
  "chat.commandCenter.enabled": false,
  "workbench.colorTheme": "Default Light Modern",
};
fs.writeFileSync(path.join(userData, "User", "settings.json"), JSON.stringify(commonSettings, null, 2));
// The project's own configuration; the workspace setting below overrides its target until the
// 'project target' step removes that setting.
fs.writeFileSync(path.join(ws, "tirkit.toml"), 'target = "cuda-sm90"\n');
fs.writeFileSync(path.join(ws, ".vscode", "settings.json"), JSON.stringify({
  "tirkit.server.pythonPath": PYTHON,
  "tirkit.target": "llvm",
}, null, 2));

const ENTRY = path.join(CS_DIR, "node_modules/code-server/out/node/entry.js");
const csArgs = ["--auth", "none", "--disable-telemetry", "--disable-update-check",
  "--disable-workspace-trust", "--disable-getting-started-override",
  "--user-data-dir", userData, "--extensions-dir", extDir];

let server;
let browser;
const hardStop = setTimeout(() => {
  fail("run", `did not finish within ${TOTAL_TIMEOUT_MS / 1000}s`);
  finish(1);
}, TOTAL_TIMEOUT_MS);

function finish(code) {
  clearTimeout(hardStop);
  const tail = `${results.passed} passed, ${results.failed} failed, ${results.skipped} skipped`;
  Promise.resolve(browser?.close()).catch(() => {}).finally(() => {
    if (server && server.exitCode === null) { try { process.kill(-server.pid, "SIGTERM"); } catch { server.kill("SIGTERM"); } }
    fs.rmSync(work, { recursive: true, force: true });
    console.log(tail);
    process.exit(code || (results.failed > 0 ? 1 : 0));
  });
}

let appliedAction = null;   // the title of the schedule action applied in step 3

async function main() {
  // -- install the extension into the fresh profile
  const inst = spawnSync(process.execPath, [ENTRY, ...csArgs, "--install-extension", path.resolve(VSIX)],
    { encoding: "utf8", timeout: 60000 });
  if (inst.status !== 0 || !/successfully installed/i.test(inst.stdout + inst.stderr)) {
    fail("install .vsix", (inst.stdout + inst.stderr).trim().slice(-500));
    return;
  }
  pass("install .vsix", (inst.stdout.match(/Extension '.*' .* installed\./) ?? [""])[0]);

  // -- start code-server
  const port = await freePort();
  server = spawn(process.execPath, [ENTRY, ...csArgs, "--bind-addr", `127.0.0.1:${port}`, ws],
    { stdio: ["ignore", "pipe", "pipe"], detached: true, env: { ...process.env } });
  const csLog = fs.createWriteStream(path.join(ARTIFACTS, "code-server.log"));
  server.stdout.pipe(csLog); server.stderr.pipe(csLog);
  if (!(await waitHealthy(`http://127.0.0.1:${port}/healthz`, 30000))) {
    fail("code-server starts", "no /healthz answer in 30 s (see code-server.log)");
    return;
  }
  log(`code-server up on 127.0.0.1:${port}`);

  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
      "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-dev-shm-usage"],
  });
  const page = await browser.newPage({ viewport: { width: 1400, height: 860 } });
  await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(ws)}`);
  await page.locator(".monaco-workbench").waitFor({ timeout: 30000 });
  const shot = (name) => page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`) });

  const openFile = async (name) => {
    const row = page.locator(".explorer-folders-view .monaco-list-row", { hasText: name }).first();
    await row.waitFor({ timeout: 20000 });
    await row.click();
    await page.locator(`.tabs-container .tab.active`, { hasText: name }).first().waitFor({ timeout: 10000 });
    await page.locator(".monaco-editor .view-lines").first().waitFor();
  };
  const goTo = async (line, column) => {
    await page.locator(".monaco-editor .view-lines").first().click();
    await page.keyboard.press("Control+G");
    await page.keyboard.type(`${line}:${column}`);
    await page.keyboard.press("Enter");
    await page.waitForTimeout(150);
  };
  const runCommand = async (title) => {
    await page.keyboard.press("F1");
    const input = page.locator(".quick-input-widget input");
    await input.waitFor({ timeout: 5000 });
    await input.fill(`>${title}`);
    const row = page.locator(".quick-input-list .monaco-list-row", { hasText: title }).first();
    await row.waitFor({ timeout: 5000 });
    await page.keyboard.press("Enter");
  };

  const clearNotifications = async () => {
    await runCommand("Notifications: Clear All Notifications");
    await page.locator(".notifications-toasts .notification-toast").first().waitFor({ state: "detached", timeout: 3000 }).catch(() => {});
  };

  // -- 1. diagnostics: squiggle + Problems entry with the code
  const wants = expectations(INVALID);
  await openFile(invalidName);
  try {
    await page.locator(".monaco-editor .squiggly-error").first().waitFor({ timeout: 45000 });
    pass("error squiggle", `${await page.locator(".monaco-editor .squiggly-error").count()} in ${invalidName}`);
  } catch {
    fail("error squiggle", `none in ${invalidName} within 45 s (server log: 'tirkit' output)`);
  }
  await page.keyboard.press("Control+Shift+M");
  const rows = page.locator(".markers-panel .monaco-list-row");
  try {
    await rows.first().waitFor({ timeout: 10000 });
    await page.waitForTimeout(500);
    const texts = await rows.allInnerTexts();
    for (const w of wants) {
      const hit = texts.find((t) => t.includes(w.code) && t.includes(`[Ln ${w.line},`));
      if (hit) pass(`Problems entry ${w.code}`, hit.replace(/\s+/g, " ").trim());
      else fail(`Problems entry ${w.code}`, `no row with the code at line ${w.line}; rows: ${JSON.stringify(texts)}`);
    }
  } catch {
    fail("Problems entries", "the Problems panel shows no entry");
  }
  await shot("01-diagnostics");

  // -- status bar: server state and target
  const status = page.locator(".statusbar-item", { hasText: "tirkit" }).first();
  try {
    await page.locator(".statusbar-item", { hasText: "tirkit: llvm" }).first().waitFor({ timeout: 10000 });
    pass("status bar", (await status.innerText()).trim());
  } catch {
    fail("status bar", `shows ${JSON.stringify(await status.innerText().catch(() => "nothing"))}`);
  }
  await page.keyboard.press("Control+Shift+M");   // close the panel again

  // -- 1b. the rules that run on save (the default mode): nothing on open, their codes after a save
  if (ON_SAVE) await step("on-save diagnostics", async () => {
    const wantsSaved = expectations(ON_SAVE);
    await openFile(onSaveName);
    await page.waitForTimeout(2000);               // the diagnostics of the opened version
    const before = await page.locator(".monaco-editor .squiggly-error").count();
    if (before !== 0) {
      fail("on-save diagnostics", `${before} error squiggles in ${onSaveName} before any save`);
      return;
    }
    await page.locator(".monaco-editor .view-lines").first().click();
    await page.keyboard.press("Control+End");
    await page.keyboard.press("Enter");            // an edit, so the save writes a new version
    await page.keyboard.press("Control+S");
    await page.locator(".monaco-editor .squiggly-error").first().waitFor({ timeout: 45000 });
    await page.keyboard.press("Control+Shift+M");
    const saveRows = page.locator(".markers-panel .monaco-list-row");
    await saveRows.first().waitFor({ timeout: 10000 });
    await page.waitForTimeout(500);
    const texts = await saveRows.allInnerTexts();
    const missing = wantsSaved.filter((w) => !texts.some((t) => t.includes(w.code) && t.includes(`[Ln ${w.line},`)));
    await shot("01b-on-save");
    await page.keyboard.press("Control+Shift+M");
    if (missing.length === 0 && wantsSaved.length > 0) {
      pass("on-save diagnostics", `none before the save, then ${wantsSaved.map((w) => `${w.code} [Ln ${w.line}]`).join(", ")} in ${onSaveName}`);
    } else {
      fail("on-save diagnostics", `after the save, missing ${JSON.stringify(missing)}; rows: ${JSON.stringify(texts)}`);
    }
  });

  // -- 2. hover on the block: signature and FLOPs
  const validLines = fs.readFileSync(VALID, "utf8").split("\n");
  const blockLine = validLines.findIndex((l) => /\bT\.s?block\("/.test(l));
  await openFile(validName);
  if (blockLine < 0) {
    skip("hover on block", `${validName} has no block`);
  } else {
    const col = validLines[blockLine].indexOf('("') + 3;        // inside the block's name
    // The code lens with the kernel's FLOPs appears once the server has analysed the file.
    await page.locator(".monaco-editor .codelens-decoration", { hasText: "FLOP" }).first()
      .waitFor({ timeout: 30000 }).catch(() => log("no code lens with FLOPs on the kernel"));
    const hover = page.locator(".monaco-hover:visible", { hasText: "block" }).first();
    let text = "";
    for (let attempt = 0; attempt < 3 && !text; attempt++) {
      await goTo(blockLine + 1, col);
      await page.keyboard.press("Control+K");
      await page.keyboard.press("Control+I");
      try {
        await hover.waitFor({ timeout: 8000 });
        await page.waitForTimeout(300);
        text = await hover.innerText();
      } catch { await page.keyboard.press("Escape"); }
    }
    if (!text) fail("hover on block", "no hover appeared after 3 tries");
    else {
      const sig = /reads/.test(text) && /writes/.test(text);
      const flops = /FLOPs?\b/.test(text);
      if (sig && flops) pass("hover on block", text.split("\n").filter((l) => /FLOP|block/.test(l)).slice(0, 2).join(" | "));
      else fail("hover on block", `signature ${sig ? "shown" : "missing"}, FLOPs ${flops ? "shown" : "missing"}: ${JSON.stringify(text.slice(0, 400))}`);
    }
    await shot("02-hover");
    if (text) {   // focus the hover and scroll to its end: the cost section
      await page.keyboard.press("Control+K");
      await page.keyboard.press("Control+I");
      await page.waitForTimeout(200);
      await page.keyboard.press("End");
      await page.waitForTimeout(300);
      await shot("02b-hover-cost");
    }
    await page.keyboard.press("Escape");
  }

  await step("hover on kernel name", async () => {
    // -- 2b. hover on the kernel's name: its signature, FLOPs, time, blocks, diagnostics
    const defLine = validLines.findIndex((l) => /^\s*def\s+\w+\(/.test(l));
    if (defLine < 0) { skip("hover on kernel name", `${validName} has no kernel`); return; }
    const name = /def\s+(\w+)\(/.exec(validLines[defLine])[1];
    const hover = page.locator(".monaco-hover:visible", { hasText: "kernel" }).first();
    let text = "";
    for (let attempt = 0; attempt < 3 && !text; attempt++) {
      await goTo(defLine + 1, validLines[defLine].indexOf(name) + 2);
      await page.keyboard.press("Control+K");
      await page.keyboard.press("Control+I");
      try {
        await hover.waitFor({ timeout: 8000 });
        await page.waitForTimeout(300);
        text = await hover.innerText();
      } catch { await page.keyboard.press("Escape"); }
    }
    const wanted = [`kernel ${name}`, "FLOPs", "estimated time", "blocks", "diagnostics"];
    const missing = wanted.filter((w) => !text.includes(w));
    if (text && missing.length === 0) pass("hover on kernel name", text.split("\n").filter((l) => /kernel|FLOPs|blocks/.test(l)).join(" | "));
    else fail("hover on kernel name", text ? `missing ${JSON.stringify(missing)}: ${JSON.stringify(text.slice(0, 400))}` : "no hover appeared after 3 tries");
    await shot("02c-hover-kernel");
    await page.keyboard.press("Escape");
  });

  await step('schedule code actions', async () => {
    // -- 3. Ctrl+. at a loop: schedule actions
    const loopLine = validLines.findIndex((l) => /^\s*for\s/.test(l));
    if (SCHEDULE === "no") {
      skip("schedule code actions", "this build has no schedule code actions yet");
    } else if (loopLine < 0) {
      skip("schedule code actions", `${validName} has no loop`);
    } else {
      const before = fs.readFileSync(path.join(ws, validName), "utf8");
      await goTo(loopLine + 1, validLines[loopLine].indexOf("for") + 5);
      await page.keyboard.press("Control+Period");
      const widget = page.locator(".action-widget");
      const none = page.locator(".monaco-editor-overlaymessage", { hasText: "No code actions" });
      let titles = [];
      const shown = await Promise.race([
        widget.first().waitFor({ timeout: 15000 }).then(() => "widget"),
        none.first().waitFor({ timeout: 15000 }).then(() => "none"),
      ]).catch(() => "nothing");
      if (shown === "widget") {
        await page.waitForTimeout(300);
        titles = (await widget.locator(".monaco-list-row").allInnerTexts()).map((t) => t.trim()).filter(Boolean);
      } else if (shown === "nothing") {
        log("Ctrl+. showed neither the action list nor 'No code actions available'");
      } else {
        titles = ["(No code actions available)"];
      }
      await shot("03-code-actions");
      const sched = titles.filter((t) => /\b(split|fuse|reorder|parallel|vectorize|unroll|bind)\b/i.test(t));
      if (sched.length === 0) {
        if (SCHEDULE === "yes") fail("schedule code actions", `none offered; got ${JSON.stringify(titles)}`);
        else skip("schedule code actions", `the server offers none at the loop yet (got ${JSON.stringify(titles)})`);
        await page.keyboard.press("Escape");
      } else {
        pass("schedule code actions offered", sched.slice(0, 6).join(" | "));
        const choice = sched.find((t) => /split/i.test(t)) ?? sched[0];
        // keyboard, as a user would: the list sits under a pointer-blocking overlay
        for (let i = 0; i < 40; i++) {
          const focused = await widget.locator(".monaco-list-row.focused").first().getAttribute("aria-label").catch(() => null);
          if (focused === choice) break;
          await page.keyboard.press("ArrowDown");
        }
        await page.keyboard.press("Enter");
        await page.waitForTimeout(800);
        await page.keyboard.press("Control+S");
        let after = before;
        for (let i = 0; i < 40 && after === before; i++) {
          await page.waitForTimeout(250);
          after = fs.readFileSync(path.join(ws, validName), "utf8");
        }
        if (after !== before) appliedAction = choice;
      if (after !== before) pass("schedule action edits the file", `'${choice}': ${before.split("\n").length} -> ${after.split("\n").length} lines`);
        else fail("schedule action edits the file", `'${choice}' left ${validName} unchanged`);
        await shot("04-after-action");
      }
    }
  });

  await step('schedule trace command', async () => {
    // -- 3b. the trace of what was applied, as Python (or a clear message when there is none)
    await page.keyboard.press("Escape");
    await clearNotifications();
    const tabsBefore = await page.locator(".tabs-container .tab").count();
    const note = page.locator(".notifications-toasts .notification-toast", { hasText: "tirkit" }).first();
    const ask = async () => {
      await runCommand("tirkit: Show Schedule Trace");
      return Promise.race([
        note.waitFor({ timeout: 10000 }).then(() => "message"),
        page.waitForFunction((n) => document.querySelectorAll(".tabs-container .tab").length > n, tabsBefore,
          { timeout: 10000 }).then(() => "document"),
      ]);
    };
    // VS Code runs an action's record command after applying its edit, without the test
    // waiting for it: ask again (three times at most) while the server has not heard it yet
    let answered = await ask();
    for (let tries = 1; answered === "message" && appliedAction && tries < 3; tries++) {
      await clearNotifications();
      await page.waitForTimeout(1000);
      answered = await ask();
    }
    if (answered === "message") {
      const msg = (await note.innerText()).replace(/\s+/g, " ").trim();
      if (appliedAction) fail("schedule trace command", `an action was applied but the trace answered: ${msg}`);
      else pass("schedule trace command", `message: ${msg.slice(0, 160)}`);
    } else {
      await page.waitForTimeout(500);
      const shown = (await page.locator(".editor-group-container.active .monaco-editor .view-lines").first().innerText()).replace(/\u00a0/g, " ");
      const wanted = appliedAction ? /\bsplit\b|\bfuse\b|\breorder\b|\bvectorize\b|\bparallel\b/ : /./;
      if (wanted.test(shown)) pass("schedule trace command", `document: ${JSON.stringify(shown.split("\n").slice(0, 3).join(" | ").slice(0, 160))}`);
      else fail("schedule trace command", `the trace does not name the applied primitive: ${JSON.stringify(shown.slice(0, 200))}`);
      await shot("04b-schedule-trace");
    }
    await runCommand("View: Close All Editors");   // the trace view and the kernel, all saved
    await page.waitForTimeout(300);
  });

  await step('format kernels', async () => {
    // -- 4a. Format Kernels rewrites the disturbed copy into the canonical text
    if (messyText === validText) {
      skip("format kernels", `could not disturb the spacing of ${validName}`);
    } else {
      await openFile(messyName);
      await page.locator(".monaco-editor .codelens-decoration", { hasText: "FLOP" }).first()
        .waitFor({ timeout: 20000 }).catch(() => {});
      await runCommand("tirkit: Format Kernels");
      await page.waitForTimeout(800);
      await page.keyboard.press("Control+S");
      let now = messyText;
      for (let i = 0; i < 40 && now === messyText; i++) {
        await page.waitForTimeout(250);
        now = fs.readFileSync(path.join(ws, messyName), "utf8");
      }
      if (now === validText) pass("format kernels", `${messyName} is back to the canonical text`);
      else fail("format kernels", now === messyText ? "the file did not change" : `unexpected text: ${JSON.stringify(now.slice(0, 300))}`);
    }
  });

  await step('canonical form command', async () => {
    // -- 4b. the canonical-form command answers (a document, or a clear message)
    await openFile(validName);
    await goTo(blockLine >= 0 ? blockLine + 1 : 1, 10);
    await clearNotifications();
    const editorsBefore = await page.locator(".tabs-container .tab").count();
    await runCommand("tirkit: Show Canonical Form of Kernel");
    try {
      const note = page.locator(".notifications-toasts .notification-toast", { hasText: "tirkit" }).first();
      const answered = await Promise.race([
        note.waitFor({ timeout: 10000 }).then(() => "message"),
        page.waitForFunction((n) => document.querySelectorAll(".tabs-container .tab").length > n, editorsBefore,
          { timeout: 10000 }).then(() => "document"),
      ]);
      if (answered === "message") {
        pass("canonical form command", `message: ${(await note.innerText()).replace(/\s+/g, " ").trim().slice(0, 160)}`);
      } else {
        await page.waitForTimeout(500);
        const shown = (await page.locator(".editor-group-container.active .monaco-editor .view-lines").first().innerText()).replace(/\u00a0/g, " ");
        const fn = /def\s+(\w+)\(/.exec(validLines.join("\n"))?.[1] ?? "";
        if (shown.includes(`def ${fn}(`)) pass("canonical form command", `document beside the kernel with 'def ${fn}('`);
        else fail("canonical form command", `the document opened does not show the kernel: ${JSON.stringify(shown.slice(0, 200))}`);
      }
    } catch {
      fail("canonical form command", "neither a document nor a message appeared");
    }
    await page.waitForTimeout(300);
    await shot("05-canonical-form");
  });

  await step('project target', async () => {
    // -- 4c. with tirkit.target unset, the project's tirkit.toml decides (the extension must not
    // send its own default over it)
    await page.keyboard.press("Escape");
    await runCommand("View: Close All Editors");
    await openFile(validName);
    fs.writeFileSync(path.join(ws, ".vscode", "settings.json"), JSON.stringify({
      "tirkit.server.pythonPath": PYTHON,
    }, null, 2));
    await page.locator(".statusbar-item", { hasText: "tirkit: project target" }).first().waitFor({ timeout: 15000 });
    const lens = page.locator(".monaco-editor .codelens-decoration", { hasText: "on cuda-sm90" }).first();
    try {
      await lens.waitFor({ timeout: 15000 });
      pass("project target", `status bar 'tirkit: project target', code lens '${(await lens.innerText()).trim()}'`);
    } catch {
      fail("project target", "tirkit.target is unset but the code lens does not show tirkit.toml's cuda-sm90");
    }
    await shot("05b-project-target");
  });

  await step('target setting', async () => {
    // -- 4d. changing tirkit.target reaches the status bar and the running server (code lens),
    // over the project's target
    fs.writeFileSync(path.join(ws, ".vscode", "settings.json"), JSON.stringify({
      "tirkit.server.pythonPath": PYTHON, "tirkit.target": "llvm",
    }, null, 2));
    await page.locator(".statusbar-item", { hasText: "tirkit: llvm" }).first().waitFor({ timeout: 15000 });
    const lens = page.locator(".monaco-editor .codelens-decoration", { hasText: "on llvm" }).first();
    try {
      await lens.waitFor({ timeout: 15000 });
      pass("target setting", `status bar 'tirkit: llvm', code lens '${(await lens.innerText()).trim()}'`);
    } catch {
      fail("target setting", "the status bar shows llvm but the server's code lens does not");
    }
    await shot("05c-target-llvm");
  });

  await step('missing server message', async () => {
    // -- 5. a missing server gives a clear message with the install command
    await page.keyboard.press("Escape");
    await clearNotifications();
    const missingPy = path.join(work, "no-such-venv", "bin", "python");
    fs.writeFileSync(path.join(ws, ".vscode", "settings.json"), JSON.stringify({
      "tirkit.server.pythonPath": missingPy, "tirkit.target": "llvm",
    }, null, 2));
    try {
      const toast = page.locator(".notifications-toasts .notification-toast", { hasText: "pip install" }).first();
      await toast.waitFor({ timeout: 20000 });
      const msg = (await toast.innerText()).replace(/\s+/g, " ").trim();
      const bar = page.locator(".statusbar-item", { hasText: "tirkit: not installed" }).first();
      await bar.waitFor({ timeout: 5000 });
      if (msg.includes(missingPy) && msg.includes('-m pip install "tirkit[lsp]"')) pass("missing server message", msg.slice(0, 200));
      else fail("missing server message", `message lacks the interpreter or the install command: ${msg}`);
    } catch {
      fail("missing server message", "no message with the install command, or the status bar does not say 'not installed'");
    }
    await page.waitForTimeout(1000);   // the toast slides in
    await shot("06-missing-server");
  });
}

main().then(() => finish(), (e) => { fail("run", e?.stack ?? String(e)); finish(1); });
