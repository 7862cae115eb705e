-- Headless Neovim (0.11) runs tirkit-lsp's "Tune this kernel" as a user would: the code
-- lenses of FILE are asked for, the one titled "Tune this kernel" is run through
-- workspace/executeCommand with Neovim's own handlers (work-done progress, and the
-- workspace/applyEdit that puts the best schedule into the buffer), then the buffer is
-- written.  The settings given: the lens on (`tirkit.tune.codeLens`, off by default in the
-- server; the VS Code extension turns it on) and the trial budget (TRIALS).
-- nvim --headless --clean -l nvim_tune.lua FILE TRIALS SERVER_CMD...
-- Prints `LENS <title> <command>`, `PROGRESS <kind> <message>`, `RESULT <summary>`,
-- `WRITTEN`; exits 0 on success.
local file, trials = arg[1], tonumber(arg[2])
local cmd = {}
for i = 3, #arg do table.insert(cmd, arg[i]) end

vim.api.nvim_create_autocmd('LspProgress', {
  callback = function(ev)
    local v = ev.data.params.value
    io.stdout:write(string.format('PROGRESS %s %s\n', v.kind, v.message or v.title or ''))
  end,
})

vim.cmd.edit(file)
local buf = vim.api.nvim_get_current_buf()
local id = vim.lsp.start({ name = 'tirkit', cmd = cmd, root_dir = vim.fs.dirname(file),
                           init_options = { tirkit = { tune = { codeLens = true, trials = trials } } } },
  { bufnr = buf })
if not id then
  io.stdout:write('FAIL could not start the server\n')
  os.exit(2)
end
local client = vim.lsp.get_client_by_id(id)

local uri = vim.uri_from_bufnr(buf)
local res = client:request_sync('textDocument/codeLens', { textDocument = { uri = uri } },
  30000, buf)
if not res or res.err then
  io.stdout:write('FAIL code lenses: ' .. vim.inspect(res) .. '\n')
  os.exit(3)
end
local lens
for _, l in ipairs(res.result or {}) do
  if l.command then
    io.stdout:write('LENS ' .. l.command.title .. ' ' .. l.command.command .. '\n')
    if l.command.title == 'Tune this kernel' then lens = l end
  end
end
if not lens then
  io.stdout:write('FAIL no "Tune this kernel" lens\n')
  os.exit(4)
end

local result, err
client:exec_cmd(lens.command, { bufnr = buf }, function(e, r)
  err, result = e, r
end)
if not vim.wait(300000, function() return result ~= nil or err ~= nil end, 50) then
  io.stdout:write('FAIL the command did not answer\n')
  os.exit(5)
end
if err then
  io.stdout:write('FAIL ' .. vim.inspect(err) .. '\n')
  os.exit(6)
end
io.stdout:write('RESULT ' .. tostring(result.summary) .. ' applied=' .. tostring(result.applied)
  .. '\n')
vim.cmd.write()
io.stdout:write('WRITTEN\n')
client:stop()
vim.wait(2000, function() return client:is_stopped() end, 20)
os.exit(0)
