-- Reserve then confirm, as one flow. The route's path is the bookings collection
-- (/octo/bookings) and its body the reservation, with "{{uuid}}" placeholders as in
-- booking.lua. Every reservation answered 200 with status ON_HOLD is confirmed next
-- (POST <path>/<uuid>/confirm with BERTH_BENCH_CONFIRM_BODY, default a contact); the uuid
-- of every booking answered CONFIRMED is collected for the route's check hook.
-- wrk counts reserve and confirm requests alike, so requests/s is twice the flows/s.

wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"

local template = bench.body()
local confirm_body = os.getenv("BERTH_BENCH_CONFIRM_BODY")
if not confirm_body or confirm_body == "" then
   confirm_body = '{"contact":{"fullName":"Bench Mark","emailAddress":"bench@example.com"}}'
end
local collection = wrk.path:gsub("/$", "")
local to_confirm = {}

function request()
   local uuid = table.remove(to_confirm)
   if uuid then
      return wrk.format("POST", collection .. "/" .. uuid .. "/confirm", nil, confirm_body)
   end
   return wrk.format("POST", collection, nil, bench.fill(template))
end

function response(status, headers, body)
   bench.count(status, body)
   if status == 200 then
      local uuid = body:match('"uuid"%s*:%s*"([^"]+)"')
      local state = body:match('"status"%s*:%s*"([%w_]+)"')
      if uuid and state == "ON_HOLD" then
         to_confirm[#to_confirm + 1] = uuid
      elseif uuid and state == "CONFIRMED" then
         bench.collect(uuid)
      end
   end
end
