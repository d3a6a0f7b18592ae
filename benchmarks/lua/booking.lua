-- POST a body in which every "{{uuid}}" is replaced by a fresh UUID on each request (e.g. a
-- reservation's client-side uuid and its unit items' uuids), so no two requests collide.
-- Counts answers by status and OCTO error code, and collects the uuid of every booking
-- answered 200 for the route's check hook (the first "uuid" in the answer: OCTO puts the
-- booking's own uuid before its unit items).

wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"

local template = bench.body()

function request()
   return wrk.format(nil, nil, nil, bench.fill(template))
end

function response(status, headers, body)
   bench.count(status, body)
   if status == 200 then
      bench.collect(body:match('"uuid"%s*:%s*"([^"]+)"'))
   end
end
