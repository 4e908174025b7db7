-- :checkhealth parley — whether the daemon is reachable and which versions
-- talk. Works with Neovim 0.7's health#report_* functions and with the newer
-- vim.health API.

local M = {}

local function reporter()
  local ok, health = pcall(function()
    return vim.health
  end)
  health = ok and type(health) == "table" and health or nil
  local function pick(new, old, vimscript)
    if health and health[new] then
      return health[new]
    end
    if health and health[old] then
      return health[old]
    end
    return function(msg, advice)
      if advice then
        vim.fn["health#" .. vimscript](msg, advice)
      else
        vim.fn["health#" .. vimscript](msg)
      end
    end
  end
  return {
    start = pick("start", "report_start", "report_start"),
    ok = pick("ok", "report_ok", "report_ok"),
    info = pick("info", "report_info", "report_info"),
    warn = pick("warn", "report_warn", "report_warn"),
    error = pick("error", "report_error", "report_error"),
  }
end

function M.check()
  local report = reporter()
  local parley = require("parley")
  local config = require("parley.config")
  local rpc = require("parley.rpc")

  report.start("parley")
  local v = vim.version()
  local nvim = string.format("%d.%d.%d", v.major, v.minor, v.patch)
  if vim.fn.has("nvim-0.7") == 1 then
    report.ok("Neovim " .. nvim)
  else
    report.error("Neovim " .. nvim .. " is too old", { "Parley needs Neovim 0.7 or later" })
  end
  report.info(
    "parley.nvim " .. parley.version .. ", speaking hub protocol " .. rpc.PROTOCOL .. " with position encoding utf-8"
  )

  if not parley.did_setup then
    report.warn("setup() has not been called", { 'add require("parley").setup({}) to your configuration' })
  end

  local cmd = config.options.parley_cmd or "parley"
  if vim.fn.executable(cmd) == 1 then
    local out = vim.trim(vim.fn.system({ cmd, "--version" }))
    report.ok("`" .. cmd .. "` command line: " .. out)
  elseif config.options.socket then
    report.info("`" .. cmd .. "` is not on PATH; using the configured socket")
  else
    report.warn("`" .. cmd .. "` is not an executable on PATH", {
      "install Parley (cargo install --locked --path daemon), or set parley_cmd or socket in setup()",
    })
  end

  local path, err = rpc.socket_path()
  if not path then
    report.error("cannot find the daemon's socket: " .. err)
    return
  end
  local reply, failure = rpc.probe(path, 2000)
  if not reply then
    report.error("no Parley daemon answers at " .. path .. ": " .. tostring(failure), {
      "start one with `parley daemon` (an agent's parley-mcp also starts one)",
      "or install the service: systemd/parley.service, launchd/dev.parley.daemon.plist",
    })
  else
    local facts = string.format("Parley %s, hub protocol %d, pid %d", reply.version, reply.protocol, reply.pid)
    report.ok("daemon reachable at " .. path .. ": " .. facts)
    if reply.protocol ~= rpc.PROTOCOL then
      report.error(string.format("the daemon speaks hub protocol %d, this plugin %d", reply.protocol, rpc.PROTOCOL), {
        "upgrade the older of the two",
      })
    end
  end

  local status = rpc.status()
  if status.hello then
    report.ok(string.format(
      "this window is connected as editor %s on %s",
      parley.editor_id(),
      table.concat(parley.workspaces(), ", ")
    ))
  elseif parley.did_setup then
    local why = status.error and (": " .. status.error) or ""
    report.warn("this window is not connected (" .. status.state .. ")" .. why, {
      "it retries on its own; :ParleyConnect retries now",
    })
  end
end

return M
