-- A walkthrough's gitdiff block as a `git diff` buffer: the range as git
-- means it (`A..B`, `A...B`, one commit against the working tree,
-- `working`, `staged`, with `exclude_staged`/`exclude_unstaged` applied
-- where they mean something), HEAD read as the commit that was checked out
-- when the walkthrough was presented, and <CR> on a line of the diff opening
-- the file at that line.

local api = vim.api
local M = {}

local function value(x)
  if x == vim.NIL then
    return nil
  end
  return x
end

-- `end_` with a leading HEAD read as `head` (HEAD, HEAD~2, HEAD^): the
-- range is the one the agent meant, even after more commits.
local function pinned(end_, head)
  if head and end_:sub(1, 4) == "HEAD" then
    local rest = end_:sub(5)
    if rest == "" or rest:match("^[~^]") then
      return head .. rest
    end
  end
  return end_
end

-- What `git diff` is given for gitdiff `block` (nil when there is nothing to
-- show), and the change in words. `head` is the walkthrough's commit, if any.
function M.args(block, head)
  local range = vim.trim(tostring(block.range or ""))
  local no_staged, no_unstaged = block.exclude_staged == true, block.exclude_unstaged == true
  if range == "staged" then
    return { "--cached" }, "the staged changes"
  elseif range == "working" then
    if no_staged and no_unstaged then
      return nil, "the working tree with both its staged and unstaged changes excluded: nothing to show"
    elseif no_staged then
      return {}, "the unstaged changes (the working tree against the index)"
    elseif no_unstaged then
      return { "--cached" }, "the staged changes"
    end
    return { "HEAD" }, "the uncommitted changes (the working tree against HEAD)"
  end
  local from, dots, to = range:match("^(.-)(%.%.%.?)(.*)$")
  if from then
    from, to = from ~= "" and from or "HEAD", to ~= "" and to or "HEAD"
    local spec = pinned(from, head) .. dots .. pinned(to, head)
    local when = spec ~= range and (" (HEAD read as " .. head:sub(1, 12) .. ", checked out when it was presented)") or ""
    return { spec }, "the change " .. range .. when
  end
  -- One commit: against the working tree, as `git diff A` shows it.
  local commit = pinned(range, head)
  if no_unstaged then
    return { "--cached", commit }, "the index against " .. range
  end
  local note = no_staged and " (exclude_staged cannot apply to a diff with the working tree)" or ""
  return { commit }, "the working tree against " .. range .. note
end

-- The file and line (1-based, in the newer text) that line `lnum` of diff
-- `lines` is about, or nil and why.
function M.place_of(lines, lnum)
  local new_line, count, path = nil, 0, nil
  local i = lnum
  while i >= 1 do
    local line = lines[i]
    local start = line:match("^@@ %-%d+,?%d* %+(%d+),?%d* @@")
    if start and not new_line then
      new_line = tonumber(start) + count
    elseif not new_line and i < lnum and (line:sub(1, 1) == " " or line:sub(1, 1) == "+") then
      count = count + 1
    elseif not new_line and line:match("^diff ") then
      break
    end
    if new_line then
      local target = line:match("^%+%+%+ (.*)$")
      if target then
        target = target:gsub('^"(.*)"$', "%1")
        if target == "/dev/null" then
          return nil, "the file was deleted in this change"
        end
        path = target:gsub("^b/", "")
        break
      end
      if line:match("^diff ") then
        break
      end
    end
    i = i - 1
  end
  if not new_line or not path then
    return nil, "put the cursor on a line of a hunk"
  end
  -- A removed line points at the line that now stands in its place.
  return { path = path, line = math.max(1, new_line) }
end

-- Runs `git diff` for `block` of walkthrough `w`; returns the buffer's lines, or nil and why.
function M.lines(w, block)
  local args, what = M.args(block, value(w.head))
  local header = "# " .. what .. " in " .. tostring(w.workspace)
  if not args then
    return { header }
  end
  local argv = { "git", "-C", tostring(w.workspace), "diff", "--no-color", "--no-ext-diff", "--src-prefix=a/", "--dst-prefix=b/" }
  vim.list_extend(argv, args)
  local out = vim.fn.systemlist(argv)
  if vim.v.shell_error ~= 0 then
    return nil, "git diff " .. table.concat(args, " ") .. " failed: " .. table.concat(out, " ")
  end
  header = vim.trim(header .. " · git diff " .. table.concat(args, " "))
  local lines = { header, "# <CR> on a line opens the file there" }
  if #out == 0 then
    lines[#lines + 1] = "# (no changes)"
  end
  vim.list_extend(lines, out)
  return lines
end

-- Shows `block`'s diff in a buffer of its own; `open_file(path, line)` opens a file from it.
function M.show(w, block, open_file)
  local lines, problem = M.lines(w, block)
  if not lines then
    return nil, problem
  end
  local name = "parley://walkthrough/" .. tostring(w.id) .. "/diff/" .. tostring(block.index)
  local buf = nil
  for _, b in ipairs(api.nvim_list_bufs()) do
    if api.nvim_buf_is_valid(b) and api.nvim_buf_get_name(b) == name then
      buf = b
    end
  end
  if not buf then
    buf = api.nvim_create_buf(false, true)
    api.nvim_buf_set_name(buf, name)
    vim.bo[buf].buftype = "nofile"
    vim.bo[buf].bufhidden = "hide"
    vim.bo[buf].swapfile = false
    vim.keymap.set("n", "<CR>", function()
      local at, why = M.place_of(api.nvim_buf_get_lines(buf, 0, -1, false), api.nvim_win_get_cursor(0)[1])
      if not at then
        return vim.notify("Parley: " .. why, vim.log.levels.INFO)
      end
      open_file(vim.b[buf].parley_workspace .. "/" .. at.path, at.line)
    end, { buffer = buf, desc = "Parley: open the file at this line of the diff" })
    vim.keymap.set("n", "q", "<Cmd>close<CR>", { buffer = buf, desc = "Parley: close the diff" })
  end
  vim.b[buf].parley_workspace = tostring(w.workspace)
  vim.bo[buf].modifiable = true
  api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  vim.bo[buf].modified = false
  vim.bo[buf].filetype = "diff"
  return buf
end

return M
