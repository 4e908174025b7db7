-- A walkthrough as the lines of its buffer: its markdown as the agent wrote
-- it, and each fenced block as a person reads it (numbered `[N]` as
-- `parley walkthrough show` numbers them): a diagram's mermaid source, a
-- comment with the lines it is on or why it was not placed, a diff range,
-- a button with where its clicks stand. Alongside the lines: what <CR> does
-- on each line (a target), and the steps ]w and [w go through (every place
-- of every placed comment, in the document's order). Touches no buffer.

local deliveries = require("parley.deliveries")

local M = {}

-- JSON null arrives as vim.NIL.
local function value(x)
  if x == vim.NIL then
    return nil
  end
  return x
end

local function text_lines(text)
  local lines = vim.split(value(text) or "", "\n", { plain = true })
  while #lines > 0 and lines[#lines] == "" do
    lines[#lines] = nil
  end
  return lines
end

-- "src/auth.rs:2" or "src/auth.rs:2-3", 1-based as people count lines.
function M.place_text(place)
  local first, last = (tonumber(place.start_line) or 0) + 1, (tonumber(place.end_line) or 0) + 1
  if first == last then
    return place.path .. ":" .. first
  end
  return place.path .. ":" .. first .. "-" .. last
end

local function plural(n, one, many)
  return n .. " " .. (n == 1 and one or many)
end

-- Where one click's message to the agent stands, in the words threads use.
function M.click_state(click, agent)
  return deliveries.label({ agent = agent, state = click.state, via = value(click.via) }, { resendable = false })
end

-- What a button says of its clicks: "not clicked yet", or how many and where the last stands.
function M.clicks_text(block, agent)
  local clicks = block.clicks or {}
  local last = clicks[#clicks]
  if not last then
    return "not clicked yet"
  end
  local times = #clicks == 1 and "clicked by " .. tostring(last.author)
    or ("clicked " .. #clicks .. " times, the last by " .. tostring(last.author))
  return times .. ": " .. M.click_state(last, agent)
end

-- How many comments the thread of a place has beyond the agent's own, when this window knows it.
local function replies(place, threads)
  local thread = threads and value(place.thread_id) and threads[place.thread_id]
  local count = thread and #(thread.comments or {}) or 0
  if count > 1 then
    return " · " .. plural(count - 1, "reply", "replies")
  end
  return ""
end

-- The lines of walkthrough `w`, with `threads` (id → thread) for the replies
-- its comments have. Returns {
--   lines,
--   targets = lnum → { kind = "place", place } | { kind = "diff", block } | { kind = "action", block },
--   steps = { { block, place, lnum } … },
--   blocks = block index → the lnum of its first line,
-- }.
function M.render(w, threads)
  local lines, targets, steps, at = {}, {}, {}, {}
  local function add(line, target)
    lines[#lines + 1] = line
    if target then
      targets[#lines] = target
    end
    return #lines
  end
  local function quote(text)
    for _, line in ipairs(text_lines(text)) do
      add(line == "" and ">" or ("> " .. line))
    end
  end
  local agent = tostring(w.presented_by or "the agent")
  add(string.format(
    "<!-- walkthrough %s · revision %s · presented by %s · %s -->",
    tostring(w.id),
    tostring(w.revision),
    agent,
    tostring(w.updated_at or "")
  ))
  add("<!-- ]w [w: the steps · <CR>: open what is under the cursor · :ParleyWalkthroughAct N: press button N -->")

  -- The steps are counted before the lines are made, so each can say "step 2 of 5".
  local total = 0
  local by_index = {}
  for _, block in ipairs(w.blocks or {}) do
    by_index[block.index] = block
    if block.kind == "comment" and not value(block.problem) then
      total = total + #(block.places or {})
    end
  end

  for _, part in ipairs(w.parts or {}) do
    add("")
    if part.kind == "markdown" then
      for _, line in ipairs(text_lines(part.text)) do
        add(line)
      end
      -- The text's own trailing blank lines were dropped: one is added before the next part.
    else
      local block = by_index[part.index]
      if block then
        at[block.index] = #lines + 1
        local n = "[" .. tostring(block.index) .. "] "
        if block.kind == "mermaid" then
          add(n .. "Diagram (mermaid source):")
          add("```mermaid")
          for _, line in ipairs(text_lines(block.source)) do
            add(line)
          end
          add("```")
        elseif block.kind == "comment" then
          local problem = value(block.problem)
          local places = block.places or {}
          local icon = value(block.icon) and (" (" .. block.icon .. ")") or ""
          if problem then
            add(n .. "Comment" .. icon .. " at " .. tostring(block.location) .. " NOT PLACED: " .. problem)
            quote(block.body)
            for _, candidate in ipairs(block.candidates or {}) do
              add("    could be " .. M.place_text(candidate), { kind = "place", place = candidate })
            end
          elseif #places == 1 then
            local lnum = add(
              n .. "Comment" .. icon .. " on " .. M.place_text(places[1]) .. " · step " .. (#steps + 1) .. " of " .. total
                .. replies(places[1], threads),
              { kind = "place", place = places[1] }
            )
            steps[#steps + 1] = { block = block, place = places[1], lnum = lnum }
            quote(block.body)
          else
            add(n .. "Comment" .. icon .. " on " .. plural(#places, "place", "places") .. " (" .. tostring(block.location) .. "):")
            quote(block.body)
            for _, place in ipairs(places) do
              local lnum = add(
                "    " .. M.place_text(place) .. " · step " .. (#steps + 1) .. " of " .. total .. replies(place, threads),
                { kind = "place", place = place }
              )
              steps[#steps + 1] = { block = block, place = place, lnum = lnum }
            end
          end
        elseif block.kind == "gitdiff" then
          local problem = value(block.problem)
          if problem then
            add(n .. "The change " .. tostring(block.range) .. " cannot be shown: " .. problem)
          else
            add(n .. "The change " .. tostring(block.range) .. " · <CR> opens the diff", { kind = "diff", block = block })
          end
        elseif block.kind == "action" then
          local problem = value(block.problem)
          if problem then
            add(n .. "Button: " .. problem)
          else
            add(
              n .. "Button [" .. tostring(block.button) .. "] · " .. M.clicks_text(block, agent)
                .. " · :ParleyWalkthroughAct " .. tostring(block.index),
              { kind = "action", block = block }
            )
            quote(block.message)
          end
        end
      end
    end
  end
  return { lines = lines, targets = targets, steps = steps, blocks = at }
end

return M
