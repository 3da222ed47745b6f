-- wrk script: the mixed GET /api/v1/ad load of docs/benchmarks.md.
-- Paths are generated once per thread from a fixed seed (random offset 0-99,
-- limit 1-100, each of age/gender/country/platform present half the time),
-- then cycled, so wrk does no per-request work beyond sending.
-- With CALIBRATE=1 it also reports the average response body size, which
-- sizes the hello-world baseline (a separate run: counting slows wrk).
-- With DUMP_PATHS=FILE (use -t1) it writes the paths to FILE, one a line,
-- for `marquee hello -capture`.
local countries = {"US","GB","DE","FR","JP","TW","KR","CN","IN","BR","CA","AU","ES","IT","NL","SE","MX","ID","TR","PL"}
local platforms = {"android","ios","web"}
local genders = {"M","F"}
local reqs = {}
local n, i = 10000, 0
local calibrate = os.getenv("CALIBRATE") == "1"
bytes, responses = 0, 0 -- globals: done() reads them with thread:get

function init(args)
  math.randomseed(42)
  local dump = os.getenv("DUMP_PATHS") and io.open(os.getenv("DUMP_PATHS"), "w")
  for k = 1, n do
    local p = string.format("/api/v1/ad?offset=%d&limit=%d", math.random(0, 99), math.random(1, 100))
    if math.random() < 0.5 then p = p .. "&age=" .. math.random(1, 100) end
    if math.random() < 0.5 then p = p .. "&gender=" .. genders[math.random(#genders)] end
    if math.random() < 0.5 then p = p .. "&country=" .. countries[math.random(#countries)] end
    if math.random() < 0.5 then p = p .. "&platform=" .. platforms[math.random(#platforms)] end
    reqs[k] = wrk.format("GET", p)
    if dump then dump:write(p, "\n") end
  end
  if dump then dump:close() end
end

function request()
  i = i % n + 1
  return reqs[i]
end

local threads = {}
function setup(thread) table.insert(threads, thread) end

if calibrate then
  function response(status, headers, body)
    bytes = bytes + #body
    responses = responses + 1
  end
  function done(summary, latency, requests)
    local b, r = 0, 0
    for _, t in ipairs(threads) do
      b = b + t:get("bytes")
      r = r + t:get("responses")
    end
    io.write(string.format("average body: %d bytes over %d responses\n", math.floor(b / r + 0.5), r))
  end
end
