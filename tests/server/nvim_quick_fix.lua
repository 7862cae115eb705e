-- Headless Neovim (0.11) applies a quick fix of tirkit-lsp, as a user would with
-- vim.lsp.buf.code_action: the diagnostics of FILE arrive, the code actions at the first
-- diagnostic with CODE are listed, the one whose title starts with TITLE is resolved when it
-- has no edit yet, its workspace edit is applied to the buffer and the buffer is written.
-- nvim --headless --clean -l nvim_quick_fix.lua FILE CODE TITLE SERVER_CMD...
-- With TIRKIT_NVIM_SAVE_FIRST=1 the buffer is written first when CODE is not among the
-- diagnostics of opening (a rule that runs on save).
-- Prints `DIAG line col code`, `ACTION <title>` for each action offered there, `APPLIED`;
-- exits 0 on success.
local file, code, title = arg[1], arg[2], arg[3]
local cmd = {}
for i = 4, #arg do table.insert(cmd, arg[i]) end

vim.cmd.edit(file)
local buf = vim.api.nvim_get_current_buf()
-- whether the server has reported this buffer's diagnostics (pushed or pulled, possibly
-- none): one report follows the opening, so a code absent from it is absent
local reported = false
vim.api.nvim_create_autocmd('DiagnosticChanged', {
  buffer = buf, callback = function() reported = true end })
local id = vim.lsp.start({ name = 'tirkit', cmd = cmd, root_dir = vim.fs.dirname(file) },
  { bufnr = buf })
if not id then
  io.stdout:write('FAIL could not start the server\n')
  os.exit(2)
end
local client = vim.lsp.get_client_by_id(id)

local function with_code()
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    if tostring(d.code) == code then return d end
  end
end

local got = vim.wait(30000, function() return with_code() ~= nil or reported end, 20)
if with_code() == nil and os.getenv('TIRKIT_NVIM_SAVE_FIRST') == '1' then
  -- a rule that runs on save: write the buffer, as a user would, and wait again
  vim.cmd.write()
  vim.wait(30000, function() return with_code() ~= nil end, 20)
end
got = with_code() ~= nil
for _, d in ipairs(vim.diagnostic.get(buf)) do
  io.stdout:write(string.format('DIAG %d %d %s\n', d.lnum, d.col, tostring(d.code)))
end
if not got then
  io.stdout:write('NO_DIAGNOSTIC ' .. code .. '\n')
end

-- the range of the diagnostic (or of the cursor's line when there is none), and the LSP
-- diagnostics there as the client keeps them
local d = with_code()
local range, context_diags
if d then
  range = { start = { line = d.lnum, character = d.col },
            ['end'] = { line = d.end_lnum, character = d.end_col } }
  context_diags = { d.user_data.lsp }
else
  range = { start = { line = 11, character = 22 }, ['end'] = { line = 11, character = 22 } }
  context_diags = {}
end
local params = { textDocument = { uri = vim.uri_from_bufnr(buf) }, range = range,
                 context = { diagnostics = context_diags } }
local res = client:request_sync('textDocument/codeAction', params, 30000, buf)
if not res or res.err then
  io.stdout:write('FAIL code actions: ' .. vim.inspect(res) .. '\n')
  os.exit(4)
end
local chosen
for _, a in ipairs(res.result or {}) do
  io.stdout:write('ACTION ' .. a.title .. '\n')
  if not chosen and a.title:sub(1, #title) == title then chosen = a end
end
if not chosen then
  client:stop()
  os.exit(0)
end
if not chosen.edit then
  local r = client:request_sync('codeAction/resolve', chosen, 30000, buf)
  if not r or r.err or not r.result then
    io.stdout:write('FAIL resolve: ' .. vim.inspect(r) .. '\n')
    os.exit(5)
  end
  chosen = r.result
end
vim.lsp.util.apply_workspace_edit(chosen.edit, client.offset_encoding)
vim.cmd.write()
io.stdout:write('APPLIED\n')
client:stop()
vim.wait(2000, function() return client:is_stopped() end, 20)
os.exit(0)
