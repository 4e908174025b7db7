-- :help parley: the help file's tags as :helptags makes them, the help
-- opening on the plugin, its options and its commands, and every link in it
-- leading somewhere. Driven by tests/tests/nvim.rs
-- (nvim_opens_the_help_on_the_plugin_its_options_and_commands).

local h = require("helpers")
local api = vim.api

-- The tags of a tags file: name → true.
local function tags_of(file)
  local tags = {}
  for _, line in ipairs(vim.fn.readfile(file)) do
    tags[line:match("^[^\t]+")] = true
  end
  return tags
end

-- Opens :help `subject` and returns the help buffer's file name and the line the cursor is on.
local function help(subject)
  vim.cmd("help " .. subject)
  local name = api.nvim_buf_get_name(0)
  local line = api.nvim_get_current_line()
  assert.equals("help", vim.bo.buftype)
  vim.cmd("helpclose")
  return name, line
end

describe(":help parley", function()
  local plugin = vim.fn.fnamemodify(h.env("PARLEY_SPEC"), ":h:h")
  -- The help file is copied out, so the tags :helptags writes stay out of the plugin's folder.
  local runtime = vim.fn.tempname()
  local tags

  it("has tags :helptags makes without complaint", function()
    vim.fn.mkdir(runtime .. "/doc", "p")
    local text = vim.fn.readfile(plugin .. "/doc/parley.txt")
    for i, line in ipairs(text) do
      assert(vim.fn.strdisplaywidth(line) <= 78, "line " .. i .. " is wider than 78 cells: " .. line)
    end
    vim.fn.writefile(text, runtime .. "/doc/parley.txt")
    -- A duplicate tag or a missing file is an error here (E154, E150).
    vim.cmd("helptags " .. vim.fn.fnameescape(runtime .. "/doc"))
    tags = tags_of(runtime .. "/doc/tags")
    for _, tag in ipairs({ "parley", "parley-setup", "parley-options", "parley-commands", "parley-inbox" }) do
      assert.is_true(tags[tag], tag .. " is not a tag")
    end
    for _, tag in ipairs({ "parley-rounds", "parley-threads", "parley-health", "parley.setup()" }) do
      assert.is_true(tags[tag], tag .. " is not a tag")
    end
    vim.opt.runtimepath:prepend(runtime)
  end)

  it("opens on the plugin, an option and a command", function()
    local name, line = help("parley")
    assert.equals(runtime .. "/doc/parley.txt", name)
    assert.matches("%*parley%*", line)
    name, line = help("parley-option-debounce_ms")
    assert.equals(runtime .. "/doc/parley.txt", name)
    assert.matches("%*parley%-option%-debounce_ms%*", line)
    name, line = help(":ParleyReviewRound")
    assert.equals(runtime .. "/doc/parley.txt", name)
    assert.matches("%*:ParleyReviewRound%*", line)
    name, line = help("parley-inbox")
    assert.matches("THE INBOX", line)
  end)

  it("has a tag for every option setup() checks and every command it defines", function()
    h.setup()
    local missing = {}
    for name in pairs(require("parley.config").schema) do
      if not tags["parley-option-" .. name] then
        missing[#missing + 1] = "parley-option-" .. name
      end
    end
    local commands = vim.tbl_keys(api.nvim_get_commands({}))
    local ours = vim.tbl_filter(function(name)
      return name:match("^Parley")
    end, commands)
    assert.is_true(#ours >= 16, "setup() defined " .. #ours .. " commands: " .. table.concat(ours, ", "))
    for _, name in ipairs(ours) do
      if not tags[":" .. name] then
        missing[#missing + 1] = ":" .. name
      end
    end
    table.sort(missing)
    assert.same({}, missing)
  end)

  it("links only to tags that exist, its own or Neovim's", function()
    local known = vim.tbl_extend("force", tags_of(vim.env.VIMRUNTIME .. "/doc/tags"), tags)
    local text = table.concat(vim.fn.readfile(runtime .. "/doc/parley.txt"), "\n")
    local dangling, links = {}, 0
    for link in text:gmatch("|([^|%s]+)|") do
      links = links + 1
      if not known[link] then
        dangling[#dangling + 1] = link
      end
    end
    assert.is_true(links > 30, "only " .. links .. " links")
    assert.same({}, dangling)
  end)
end)
