-- Runs one busted spec file inside this Neovim, with the plugin on the
-- runtimepath. tests/tests/nvim.rs starts it as
--   PARLEY_SPEC=spec/x_spec.lua nvim --headless -u NONE -i NONE -n -c "luafile spec/run.lua"
-- and reads busted's TAP report on stdout; the exit code is 0 only when every test passed.
--
-- Environment: PARLEY_SPEC (the spec file), PARLEY_BUSTED_LUA (the directory
-- holding busted/, default Debian's /usr/share/lua/5.1).

local here = vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h")
local root = vim.fn.fnamemodify(here, ":h")
vim.opt.runtimepath:prepend(root)
vim.cmd("filetype on")

local lua_dir = os.getenv("PARLEY_BUSTED_LUA") or "/usr/share/lua/5.1"
package.path = table.concat({ here .. "/?.lua", lua_dir .. "/?.lua", lua_dir .. "/?/init.lua", package.path }, ";")
local cpath = {}
for _, dir in ipairs({ "/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/local/lib", "/usr/lib" }) do
  cpath[#cpath + 1] = dir .. "/lua/5.1/?.so"
end
package.cpath = table.concat(cpath, ";") .. ";" .. package.cpath

local spec = os.getenv("PARLEY_SPEC")
local loaded, runner = pcall(require, "busted.runner")
if not spec or not loaded then
  local why = spec and ("busted is missing (" .. tostring(runner) .. ")") or "PARLEY_SPEC is not set"
  io.stderr:write(why .. ": run scripts/test (it installs neovim and lua-busted)\n")
  io.stderr:flush()
  vim.cmd("cquit 3")
end

-- busted reads its command line from the global `arg`. Called from a Lua
-- function (not straight through pcall), it returns on success and raises on
-- failure instead of calling os.exit, which would hang inside Neovim.
arg = { [0] = "busted", "--output=TAP", "--no-keep-going", spec }
local ok = pcall(function()
  runner({ standalone = false })
end)
io.stdout:flush()
if ok then
  vim.cmd("qall!")
else
  vim.cmd("cquit 1")
end
