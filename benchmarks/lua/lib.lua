-- Helpers every benchmark script can use. run.py prepends this file to the route's script
-- and appends report.lua, then hands the result to `wrk -s`.
--
-- wrk runs the script in one Lua state per thread (request/response/init) plus a main
-- state (setup/done); globals are per state. bench_thread_id (1, 2, ...) is set in every
-- thread's state by report.lua's setup() before init() runs.

bench = {}

local uuid_counter = 0
local seeded = false

-- A fresh UUID (version 4 layout). The last 12 hex digits are the thread id and a
-- per-thread counter, so UUIDs never repeat within a run; the rest is random, so they do
-- not repeat across runs either.
function bench.uuid()
   if not seeded then
      -- From the system's randomness: seeded from the clock (whole seconds and CPU time), two
      -- runs started close together could draw the same seed, and so the same UUIDs, answered
      -- as repeats of the earlier run's bookings or refused as another request's uuid.
      local urandom = assert(io.open("/dev/urandom", "rb"))
      local a, b, c, d = urandom:read(4):byte(1, 4)
      urandom:close()
      math.randomseed(((a * 256 + b) * 256 + c) * 256 + d + (bench_thread_id or 0))
      seeded = true
   end
   uuid_counter = uuid_counter + 1
   return string.format(
      "%04x%04x-%04x-4%03x-%x%03x-%04x%08x",
      math.random(0, 0xffff), math.random(0, 0xffff), math.random(0, 0xffff),
      math.random(0, 0xfff), math.random(8, 11), math.random(0, 0xfff),
      (bench_thread_id or 0) % 0x10000, uuid_counter
   )
end

-- The request body: the file named by BERTH_BENCH_BODY_FILE (run.py writes the route's JSON
-- body there), else the text of BERTH_BENCH_BODY.
function bench.body()
   local path = os.getenv("BERTH_BENCH_BODY_FILE")
   if path and path ~= "" then
      local file = assert(io.open(path, "rb"))
      local text = file:read("*a")
      file:close()
      return text
   end
   local text = os.getenv("BERTH_BENCH_BODY")
   if text and text ~= "" then
      return text
   end
   error("no request body: set BERTH_BENCH_BODY_FILE or BERTH_BENCH_BODY")
end

-- Replace every "{{uuid}}" in text with its own fresh UUID.
function bench.fill(text)
   return (text:gsub("{{uuid}}", bench.uuid))
end

-- Count an answer by status; for an error answer also by its OCTO error code, e.g.
-- "400 UNPROCESSABLE_ENTITY". run.py reports these counts per round. Call it from a
-- response() function (defining response() makes wrk read every body: a small cost that
-- the baseline rounds pay too, since they run the same script).
bench_statuses = {}
function bench.count(status, body)
   local key = tostring(status)
   if status >= 300 and body then
      local code = body:match('"error"%s*:%s*"([%w_]+)"')
      if code then
         key = key .. " " .. code
      end
   end
   bench_statuses[key] = (bench_statuses[key] or 0) + 1
end

-- Remember a value (e.g. the uuid of a booking answered 200); run.py hands the collected
-- values of Berth's rounds to the route's check hook.
bench_collected = {}
function bench.collect(value)
   if value then
      bench_collected[#bench_collected + 1] = value
   end
end
