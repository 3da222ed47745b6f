-- wrk script: cycles through the paths in the file named by PATHS (one a
-- line), pre-built once per thread, each thread starting at a different
-- place — what `marquee bench` does, so the two can be compared on the same
-- requests. Make the file with `marquee bench -scenario … -dump-paths FILE`.
local reqs, n, i = {}, 0, 0
local offset = 0

function setup(thread)
  thread:set("offset", offset)
  offset = offset + 1
end

function init(args)
  for line in io.lines(os.getenv("PATHS")) do
    if line ~= "" then
      n = n + 1
      reqs[n] = wrk.format("GET", line)
    end
  end
  i = (offset * math.floor(n / 2)) % n
end

function request()
  i = i % n + 1
  return reqs[i]
end
