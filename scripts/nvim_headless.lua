-- Neovim, headless: start `jaxmigrate server` for the file opened, print its diagnostics, quit.
--   nvim --headless -u NONE FILE.py +"luafile scripts/nvim_headless.lua"
-- (docs/editors.md; vim.lsp.start_client and buf_attach_client: Neovim 0.7 has no vim.lsp.start)
local client = vim.lsp.start_client({ name = "jaxmigrate", cmd = { "jaxmigrate", "server" },
                                      root_dir = vim.fn.getcwd() })
vim.lsp.buf_attach_client(0, client)
local found = vim.wait(30000, function() return #vim.diagnostic.get(0) > 0 end, 50)
for _, d in ipairs(vim.diagnostic.get(0)) do
  io.stdout:write(string.format("%s:%d:%d: %s %s\n", vim.fn.expand("%"), d.lnum + 1, d.col + 1, d.code or "", d.message))
end
if not found then io.stdout:write("no diagnostics\n") end
vim.lsp.stop_client(client)
vim.cmd("qa!")
