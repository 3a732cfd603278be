-- Headless Neovim end-to-end test of `python -m gradguard server`: a second real LSP client.
-- Usage (see run.sh):
--   GG_PYTHON=<python with gradguard> nvim --headless --clean -n -c "luafile nvim_e2e.lua" leaf_inplace.py
-- The file must hold program 1 (`w += 1` on a leaf, line 3). Works on Debian's Neovim 0.7.2
-- (vim.lsp.start_client + buf_attach_client; 0.8+ would also have vim.lsp.start).
local python = os.getenv("GG_PYTHON") or "python3"
local t0 = vim.loop.hrtime()
local function ms() return math.floor((vim.loop.hrtime() - t0) / 1e6) end
local function out(msg) io.stdout:write(string.format("[nvim %5dms] %s\n", ms(), msg)) end
local function fail(msg) out("FAIL: " .. msg); vim.cmd("cquit! 1") end

local bufnr = vim.api.nvim_get_current_buf()
local fname = vim.api.nvim_buf_get_name(bufnr)

local client_id = vim.lsp.start_client({
  name = "gradguard",
  cmd = { python, "-m", "gradguard", "server" },
  root_dir = vim.fn.fnamemodify(fname, ":p:h"),
})
if not client_id then fail("start_client failed") end
vim.lsp.buf_attach_client(bufnr, client_id)
out("server started, client id " .. client_id .. ", file " .. fname)

-- 1. diagnostics: GG101 on line 3
local function gradguard_diags()
  local ds = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    if d.source == "gradguard" then table.insert(ds, d) end
  end
  return ds
end
if not vim.wait(60000, function() return #gradguard_diags() > 0 end, 50) then fail("no diagnostics within 60 s") end
out("first diagnostic after " .. ms() .. " ms")
local d
for _, diag in ipairs(gradguard_diags()) do
  out(string.format("DIAG line=%d col=%d-%d severity=%d code=%s message=%s",
    diag.lnum + 1, diag.col, diag.end_col, diag.severity, tostring(diag.code), diag.message))
  if diag.code == "GG101" and diag.lnum == 2 then d = diag end
end
if not d then fail("expected GG101 on line 3") end

-- 2. hover on the diagnostic explains the leaf
local tdi = { uri = vim.uri_from_bufnr(bufnr) }
local res = vim.lsp.buf_request_sync(bufnr, "textDocument/hover",
  { textDocument = tdi, position = { line = d.lnum, character = d.col } }, 20000)
local hover
for _, r in pairs(res or {}) do
  if r.result and r.result.contents then
    local c = r.result.contents
    hover = type(c) == "table" and (c.value or vim.inspect(c)) or tostring(c)
  end
end
if not hover then fail("no hover") end
out("HOVER: " .. hover:gsub("\n", "\\n"):sub(1, 400))
if not hover:lower():find("leaf", 1, true) then fail("the hover does not mention the leaf") end

-- 3. code action: the quick fix that rewrites `w += 1` as `w = w + 1`; apply it and save
-- Neovim 0.7 keeps the server's `data` (where gradguard carries the fix) in user_data.lsp.
local lsp_extra = (d.user_data and d.user_data.lsp) or {}
local lsp_diag = {
  range = { start = { line = d.lnum, character = d.col }, ["end"] = { line = d.end_lnum or d.lnum, character = d.end_col } },
  message = d.message, severity = d.severity, source = d.source, code = d.code, data = lsp_extra.data,
}
local ca = vim.lsp.buf_request_sync(bufnr, "textDocument/codeAction", {
  textDocument = tdi,
  range = lsp_diag.range,
  context = { diagnostics = { lsp_diag }, only = { "quickfix" } },
}, 20000)
local titles, action = {}, nil
for _, r in pairs(ca or {}) do
  for _, a in ipairs(r.result or {}) do
    table.insert(titles, a.title)
    if not action and (a.title or ""):find("w = w + 1", 1, true) then action = a end
  end
end
out("CODE ACTIONS: " .. table.concat(titles, " | "))
if not action then fail("no quick fix rewriting to `w = w + 1`") end
if not action.edit then
  -- lazily resolved action
  local rr = vim.lsp.buf_request_sync(bufnr, "codeAction/resolve", action, 20000)
  for _, r in pairs(rr or {}) do if r.result then action = r.result end end
end
if not action.edit then fail("the quick fix has no edit") end
vim.lsp.util.apply_workspace_edit(action.edit, "utf-16")
vim.cmd("silent write")
local line = vim.api.nvim_buf_get_lines(bufnr, 2, 3, false)[1]
out("LINE 3 AFTER FIX: " .. line)
local on_disk = table.concat(vim.fn.readfile(fname), "\n")
if not on_disk:find("w = w + 1", 1, true) or on_disk:find("w += 1", 1, true) then fail("file on disk not fixed") end

-- 4. the finding goes away after didChange
if not vim.wait(20000, function() return #gradguard_diags() == 0 end, 50) then
  fail("diagnostics did not clear after the fix")
end
out("diagnostics cleared after the fix")

vim.lsp.stop_client(client_id)
vim.wait(5000, function() return vim.lsp.client_is_stopped(client_id) end, 50)
out("PASS")
vim.cmd("qall!")
