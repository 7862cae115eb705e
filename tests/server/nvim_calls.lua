-- Headless Neovim (0.11) with its main loop running (`nvim --headless -c "luafile ..."`,
-- the arguments in $TIRKIT_NVIM_ARGS: FILE LINE SERVER_CMD...): on LINE (1-based) of FILE,
-- which calls `Module.f(x, y)`, Neovim's own completion (vim.lsp.completion, in insert
-- mode after `Module.`) and signature help (vim.lsp.buf.signature_help, on the call's second
-- argument).  Prints `ITEM word | menu | kind` for each completion item in the popup menu,
-- `SIG <line>` for the signature float and `ACTIVE <text>` for its highlighted parameter.
local args = vim.json.decode(vim.env.TIRKIT_NVIM_ARGS)
local file, lnum = args[1], tonumber(args[2])
local cmd = {}
for i = 3, #args do table.insert(cmd, args[i]) end

local function out(s) io.stdout:write('\n' .. s .. '\n') end   -- apart from mode messages
local function fail(s, code) out('FAIL ' .. s); os.exit(code) end

vim.cmd.edit(file)
local buf = vim.api.nvim_get_current_buf()
local id = vim.lsp.start({ name = 'tirkit', cmd = cmd, root_dir = vim.fs.dirname(file) },
  { bufnr = buf })
if not id then fail('could not start the server', 2) end
if not vim.wait(20000, function() return #vim.diagnostic.get(buf) > 0 end, 20) then
  fail('no diagnostics', 3)
end
local line = vim.api.nvim_buf_get_lines(buf, lnum - 1, lnum, false)[1]
local dot = line:find('Module%.')
local comma = line:find(', ', dot, true)

-- signature help on the second argument, in normal mode
vim.api.nvim_win_set_cursor(0, { lnum, comma + 1 })
vim.lsp.buf.signature_help()
local win
vim.wait(10000, function()
  for _, w in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_config(w).relative ~= '' then win = w; return true end
  end
  return false
end, 20)
if not win then fail('no signature help', 4) end
local fbuf = vim.api.nvim_win_get_buf(win)
for _, l in ipairs(vim.api.nvim_buf_get_lines(fbuf, 0, -1, false)) do out('SIG ' .. l) end
for _, m in ipairs(vim.api.nvim_buf_get_extmarks(fbuf, -1, 0, -1, { details = true })) do
  local d = m[4]
  if d.hl_group == 'LspSignatureActiveParameter' then
    out('ACTIVE ' .. vim.api.nvim_buf_get_text(fbuf, m[2], m[3], d.end_row, d.end_col, {})[1])
  end
end
vim.api.nvim_win_close(win, true)

-- the callers of the function, from the call: Neovim fills the quickfix list
vim.api.nvim_win_set_cursor(0, { lnum, dot + #'Module.' })
vim.lsp.buf.incoming_calls()
if not vim.wait(10000, function() return #vim.fn.getqflist() > 0 end, 20) then
  fail('no incoming calls', 6)
end
for _, q in ipairs(vim.fn.getqflist()) do
  out(string.format('CALLER %d %d %s', q.lnum, q.col, q.text))
end
vim.cmd('cclose')
vim.api.nvim_set_current_buf(buf)

-- completion after `Module.`: insert mode needs the main loop, so the rest runs on timers
vim.lsp.completion.enable(true, id, buf)
vim.api.nvim_win_set_cursor(0, { lnum, dot + #'Module.' - 2 })
local t0 = vim.uv.now()
local function poll()
  if vim.fn.pumvisible() == 1 then
    for _, it in ipairs(vim.fn.complete_info({ 'items' }).items) do
      out(string.format('ITEM %s | %s | %s', it.word, it.menu or '', it.kind or ''))
    end
    vim.lsp.get_client_by_id(id):stop()
    os.exit(0)
  end
  if vim.uv.now() - t0 > 20000 then fail('no completion menu', 5) end
  vim.defer_fn(poll, 50)
end
vim.defer_fn(function() vim.lsp.completion.get(); poll() end, 100)
vim.api.nvim_feedkeys('a', 'n', false)
