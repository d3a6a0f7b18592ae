-- POST the same JSON body on every request: the route's `body` (run.py writes it to the
-- file named by BERTH_BENCH_BODY_FILE), or the text of BERTH_BENCH_BODY.
-- Static requests keep wrk's own cost lowest. Use booking.lua when every request needs a
-- different body.

wrk.method = "POST"
wrk.body = bench.body()
wrk.headers["Content-Type"] = "application/json"
