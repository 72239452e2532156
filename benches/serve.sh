#!/usr/bin/env bash
# `flamesite serve` under load, on 127.0.0.1 only: requests/s and latency of a run page
# (wrk, Debian's package, 8 connections for 5 s, kept alive, then one per request) with IDLE
# idle connections held open by a python client, and the server's OS threads meanwhile.
#
#   bash benches/serve.sh BIN [IDLE]     (IDLE defaults to 1000)
#
# Every loop here is bounded: wrk runs 5 s, the idle client exits after 60 s at most, the
# server is killed at the end.
set -euo pipefail
bin="$(realpath "$1")"
idle="${2:-1000}"
command -v wrk >/dev/null || { echo "serve.sh: wrk is missing (apt-get install wrk)" >&2; exit 1; }

tmp="$(mktemp -d)"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT

mkdir -p "$tmp/profiles/api"
printf 'main;serve;parse 30\nmain;serve;render 12\nmain;idle 5\n' >"$tmp/profiles/api/run1.folded"
printf 'title = "bench"\n' >"$tmp/site.toml"
port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
url="http://127.0.0.1:$port/p/api/run1/"

(cd "$tmp" && FLAMESITE_SERVE_HEADER_TIMEOUT_MS=120000 exec "$bin" serve -j 1 --port "$port" 2>"$tmp/serve.log") &
pids+=($!)
server=$!
for _ in $(seq 300); do
  python3 -c "import urllib.request, sys; urllib.request.urlopen('$url', timeout=1)" 2>/dev/null && break
  sleep 0.1
done

# The idle connections: opened, never written to, closed after 60 s or when killed.
python3 - "$port" "$idle" "$tmp/idle-ready" <<'EOF' &
import socket, sys, time
port, n, ready = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
socks = [socket.create_connection(("127.0.0.1", port)) for _ in range(n)]
open(ready, "w").write(str(len(socks)))
time.sleep(60)
EOF
pids+=($!)
for _ in $(seq 600); do [[ -s "$tmp/idle-ready" ]] && break; sleep 0.1; done
[[ -s "$tmp/idle-ready" ]] || { echo "serve.sh: the idle connections did not open" >&2; exit 1; }
echo "idle connections open: $(cat "$tmp/idle-ready")"
echo "server threads: $(awk '/^Threads:/ {print $2}' /proc/$server/status)"
echo "-- keep-alive (the server's choice: the old one closed after each response)"
wrk -t 2 -c 8 -d 5s --latency "$url"
echo "-- a new connection per request (Connection: close)"
wrk -t 2 -c 8 -d 5s --latency -H "Connection: close" "$url"
echo "server threads after: $(awk '/^Threads:/ {print $2}' /proc/$server/status)"
kill -0 "$server" 2>/dev/null && echo "server still running" || echo "server exited"
