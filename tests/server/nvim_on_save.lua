-- Headless Neovim (0.11) in its default LSP settings, as a user edits: open each file, let
-- Neovim pull its diagnostics, then `:w` and wait for what the server sends after the save.
-- nvim --headless --clean -l nvim_on_save.lua SERVER_CMD... -- FILE...
-- Prints `DIAG <phase> <file> <line> <col> <code>` (phase `open` after the pull answered,
-- `saved` after the save) and `DONE <file>`; exits 0 on success.
local cmd, files, rest = {}, {}, false
for i = 1, #arg do
  if arg[i] == '--' then rest = true
  elseif rest then table.insert(files, arg[i])
  else table.insert(cmd, arg[i]) end
end

-- count what has been handled (the diagnostics are set when the count goes up)
local pulls, pushes = {}, {}         -- bufnr -> answered pulls, uri -> pushes
local on_pull = vim.lsp.handlers['textDocument/diagnostic']
vim.lsp.handlers['textDocument/diagnostic'] = function(err, result, ctx, config)
  on_pull(err, result, ctx, config)
  pulls[ctx.bufnr] = (pulls[ctx.bufnr] or 0) + 1
end
local on_publish = vim.lsp.handlers['textDocument/publishDiagnostics']
vim.lsp.handlers['textDocument/publishDiagnostics'] = function(err, params, ctx, config)
  on_publish(err, params, ctx, config)
  pushes[params.uri] = (pushes[params.uri] or 0) + 1
end

local function report(phase, buf, file)
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    io.stdout:write(string.format('DIAG %s %s %d %d %s\n', phase, vim.fs.basename(file),
      d.lnum, d.col, tostring(d.code)))
  end
end

local caps = nil
for _, file in ipairs(files) do
  vim.cmd.edit(file)
  local buf = vim.api.nvim_get_current_buf()
  local id = vim.lsp.start({ name = 'tirkit', cmd = cmd, root_dir = vim.fs.dirname(file) },
    { bufnr = buf })
  if not id then
    io.stdout:write('FAIL could not start the server\n')
    os.exit(2)
  end
  if not caps then
    local client = vim.lsp.get_client_by_id(id)
    caps = vim.tbl_get(client.capabilities, 'workspace', 'diagnostics', 'refreshSupport')
    io.stdout:write('REFRESH_SUPPORT ' .. tostring(caps) .. '\n')
  end
  if not vim.wait(30000, function() return (pulls[buf] or 0) > 0 end, 10) then
    io.stdout:write('FAIL no pull answered for ' .. file .. '\n')
    os.exit(3)
  end
  report('open', buf, file)
  local uri = vim.uri_from_bufnr(buf)
  local pushed, pulled = pushes[uri] or 0, pulls[buf] or 0
  vim.cmd('silent write')
  -- what the save adds arrives pushed (no refresh support) or by a pull the server asks for
  if not vim.wait(30000, function()
    return (pushes[uri] or 0) > pushed or (pulls[buf] or 0) > pulled
  end, 10) then
    io.stdout:write('FAIL nothing arrived after saving ' .. file .. '\n')
    os.exit(4)
  end
  report('saved', buf, file)
  io.stdout:write('DONE ' .. vim.fs.basename(file) .. '\n')
end
for _, client in ipairs(vim.lsp.get_clients()) do client:stop() end
vim.wait(2000, function() return #vim.lsp.get_clients() == 0 end, 20)
os.exit(0)
