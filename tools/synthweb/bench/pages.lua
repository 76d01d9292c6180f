-- wrk script: rotate over /p/1 .. /p/199 of host 0 (set HOST, e.g. h000000.synth.test:PORT).
local n = 0
local host = os.getenv("HOST")
request = function()
  n = n % 199 + 1
  return wrk.format("GET", "/p/" .. n, { ["Host"] = host })
end
