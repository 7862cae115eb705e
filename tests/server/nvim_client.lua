-- Headless Neovim (0.11) as a real LSP client of tirkit-lsp.
-- nvim --headless --clean -l nvim_client.lua FILE HOVER_LINE HOVER_COL SERVER_CMD...
-- Prints `DIAG line col code` for each diagnostic and `HOVER <text>`; exits 0 on success.
local file, hline, hcol = arg[1], tonumber(arg[2]), tonumber(arg[3])
local cmd = {}
for i = 4, #arg do table.insert(cmd, arg[i]) end

vim.cmd.edit(file)
local buf = vim.api.nvim_get_current_buf()
local id = vim.lsp.start({ name = 'tirkit', cmd = cmd, root_dir = vim.fs.dirname(file) },
  { bufnr = buf })
if not id then
  io.stdout:write('FAIL could not start the server\n')
  os.exit(2)
end

local got = vim.wait(20000, function() return #vim.diagnostic.get(buf) > 0 end, 20)
if not got then
  io.stdout:write('FAIL no diagnostics\n')
  os.exit(3)
end
for _, d in ipairs(vim.diagnostic.get(buf)) do
  io.stdout:write(string.format('DIAG %d %d %s\n', d.lnum, d.col, tostring(d.code)))
end

local client = vim.lsp.get_client_by_id(id)
local params = { textDocument = { uri = vim.uri_from_bufnr(buf) },
                 position = { line = hline, character = hcol } }
local res = client:request_sync('textDocument/hover', params, 20000, buf)
if not res or res.err or not res.result then
  io.stdout:write('FAIL no hover: ' .. vim.inspect(res) .. '\n')
  os.exit(4)
end
local value = res.result.contents.value or ''
io.stdout:write('HOVER ' .. value:gsub('\n', '\\n') .. '\n')
client:stop()
vim.wait(2000, function() return client:is_stopped() end, 20)
os.exit(0)
