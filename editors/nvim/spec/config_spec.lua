-- Options: setup() checks each one's type; an unknown option or a wrong
-- type gets a warning naming it and what it takes, never an error, and the
-- default stands in. Driven by tests/tests/nvim.rs
-- (nvim_warns_of_bad_options_and_keeps_the_defaults).

local h = require("helpers")

local function warnings()
  local found = {}
  for _, note in ipairs(h.notes) do
    if note.level == vim.log.levels.WARN then
      found[#found + 1] = note.message
    end
  end
  return found
end

describe("options", function()
  local config = require("parley.config")

  before_each(function()
    h.notes = {}
  end)

  it("are taken as given when right, with no warning", function()
    h.setup({ socket = h.env("PARLEY_SOCKET"), signs = { draft = "d" }, debounce_ms = 50, notify = false })
    assert.same({}, warnings())
    assert.equals(50, config.options.debounce_ms)
    assert.equals(false, config.options.notify)
    assert.same({ thread = "C", orphaned = "?", draft = "d" }, config.options.signs)
  end)

  it("that are unknown or of the wrong type are named in a warning, and the defaults apply", function()
    -- setup() returns: a bad option is no error.
    h.setup({
      socket = h.env("PARLEY_SOCKET"),
      debounce_ms = "fast",
      signs = { thread = 5, draft = "XYZ", orphan = "!" },
      roots = "src",
      colour = "red",
    })
    assert.same({
      "Parley: unknown option `colour` is ignored (the options are author, debounce_ms, editor_id, notify, "
        .. "parley_cmd, roots, signs, socket, start_daemon, virtual_text)",
      'Parley: option `debounce_ms` takes a number of milliseconds (0 or more), not "fast": using the default, 300',
      'Parley: option `roots` takes a list of folders, not "src": using the default, the current directory',
      'Parley: option `signs.draft` takes a text of 1 or 2 cells, not "XYZ": using the default, "D"',
      "Parley: unknown option `signs.orphan` is ignored (the options are draft, orphaned, thread)",
      'Parley: option `signs.thread` takes a text of 1 or 2 cells, not 5: using the default, "C"',
    }, warnings())
    assert.equals(300, config.options.debounce_ms)
    assert.same({ thread = "C", orphaned = "?", draft = "D" }, config.options.signs)
    assert.is_nil(config.options.roots)
    assert.is_nil(config.options.colour)
    -- The defaults work: the window is on the current directory.
    assert.same({ (vim.uv or vim.loop).cwd() }, require("parley").workspaces())
    assert.is_true(require("parley").connected())
  end)

  it("given as something else than a table are a warning, and the defaults apply", function()
    config.set("fast")
    assert.same({ 'Parley: setup() takes a table of options, not "fast": using the defaults' }, warnings())
    assert.same(config.defaults, config.options)
  end)
end)
