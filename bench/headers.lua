-- wrk script for bench/api.sh: sends the headers every authenticated Kadens
-- API request needs, and prints one machine-readable summary line at the end.
--   BENCH_TOKEN   access token (without "Bearer ")
--   BENCH_TENANT  tenant id for the S4-TenantId header
-- No request()/response() callbacks: they would make wrk run Lua per request
-- and steal CPU from the server on a small machine.

local token = os.getenv("BENCH_TOKEN")
local tenant = os.getenv("BENCH_TENANT")
if token and token ~= "" then
  wrk.headers["Authorization"] = "Bearer " .. token
end
if tenant and tenant ~= "" then
  wrk.headers["S4-TenantId"] = tenant
end

function done(summary, latency, requests)
  local e = summary.errors
  -- latency values are microseconds; errors.status counts responses >= 400.
  io.write(string.format(
    "BENCH requests=%d duration_us=%d rps=%.1f p50_us=%d p90_us=%d p99_us=%d max_us=%d non2xx=%d connect_err=%d read_err=%d write_err=%d timeouts=%d\n",
    summary.requests, summary.duration, summary.requests / (summary.duration / 1e6),
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max,
    e.status, e.connect, e.read, e.write, e.timeout))
end
