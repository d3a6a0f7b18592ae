-- Appended to every benchmark script by run.py: numbers threads, gathers their counts and
-- prints one machine-readable line that run.py parses. Route scripts must not define
-- setup() or done() themselves.

bench_threads = {}

function setup(thread)
   bench_threads[#bench_threads + 1] = thread
   thread:set("bench_thread_id", #bench_threads)
end

local function encode(value)
   local kind = type(value)
   if kind == "table" then
      local parts = {}
      for key, item in pairs(value) do
         parts[#parts + 1] = '"' .. tostring(key):gsub('[%c"\\]', "?") .. '":' .. encode(item)
      end
      return "{" .. table.concat(parts, ",") .. "}"
   elseif kind == "number" then
      if value ~= value or value == math.huge or value == -math.huge then
         return "null"
      end
      return string.format("%.17g", value)
   elseif kind == "string" then
      return '"' .. value:gsub('[%c"\\]', "?") .. '"'
   end
   return "null"
end

function done(summary, latency, requests)
   local statuses = {}
   local collected = 0
   local out = nil
   local collect_file = os.getenv("BERTH_BENCH_COLLECT_FILE")
   for _, thread in ipairs(bench_threads) do
      local counts = thread:get("bench_statuses")
      if counts then
         for key, count in pairs(counts) do
            statuses[key] = (statuses[key] or 0) + count
         end
      end
      local values = thread:get("bench_collected")
      if values and #values > 0 and collect_file and collect_file ~= "" then
         out = out or assert(io.open(collect_file, "w"))
         for _, value in ipairs(values) do
            out:write(value, "\n")
         end
         collected = collected + #values
      end
   end
   if out then
      out:close()
   end
   local result = {
      duration_us = summary.duration,
      requests = summary.requests,
      bytes = summary.bytes,
      errors = summary.errors,
      latency_us = {
         min = latency.min,
         mean = latency.mean,
         max = latency.max,
         stdev = latency.stdev,
         p50 = latency:percentile(50),
         p90 = latency:percentile(90),
         p99 = latency:percentile(99),
         p999 = latency:percentile(99.9),
      },
      statuses = statuses,
      collected = collected,
   }
   io.write("BERTH_BENCH_RESULT ", encode(result), "\n")
end
