-- Reservations spread over many departures (octo/resources: seats on each). The body file's
-- first line is the reservation, with "{{uuid}}" placeholders as in booking.lua and
-- "{{slot}}" for the availability id; every further line is one availability id. Each
-- thread walks the departures in turn from its own starting point. Counts answers and
-- collects the uuid of every booking answered 200, as booking.lua does.

wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"

local lines = {}
for line in bench.body():gmatch("[^\n]+") do
   lines[#lines + 1] = line
end
local template = table.remove(lines, 1)
local slots = lines
local turn = 0

function request()
   turn = turn + 1
   local slot = slots[((turn + (bench_thread_id or 0) * 7) % #slots) + 1]
   local body = bench.fill(template):gsub("{{slot}}", slot)
   return wrk.format(nil, nil, nil, body)
end

function response(status, headers, body)
   bench.count(status, body)
   if status == 200 then
      bench.collect(body:match('"uuid"%s*:%s*"([^"]+)"'))
   end
end
