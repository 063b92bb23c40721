#!/usr/bin/env bash
# Benchmark (not a test) of the connection workloads against peer tools on one testbed
# (client → forwarding gateway, no rules → server), measured in one run. Prints ratios.
#   1. sessions/s, sequential, connect–request(GET 512 B)–response–close, against the
#      same nginx: `ab -n N -c 1` (ApacheBench: a new connection per request, the
#      TCP_CRR-like loop; netperf is not in Debian) vs fwbench's client
#      (`http --size 512 --server-program nginx`). Goal: ratio ≥ 0.9.
#      Also: 8 at once (`ab -c 8` vs `-p 8`), and fwbench's own pair (`sessions`).
#   2. 8 MiB download time from nginx: a loop of `curl` (its own time_total) vs fwbench's
#      client. Goal: fwbench mean within 10 % of curl's (ratio ≤ 1.1).
# Usage: bench/conn_vs_tools.sh [N] (as root; installs nginx, curl, apache2-utils if missing)
. "$(dirname "$0")/lib.sh"
N=${1:-3000}
need nginx nginx
need curl curl
need ab apache2-utils
TMP=$(mktemp -d)
NGX=""
stop_nginx() {
  if [ -n "$NGX" ]; then
    kill -QUIT "$NGX" 2>/dev/null || true
    wait "$NGX" 2>/dev/null || true
    NGX=""
  fi
}
on_exit() {
  stop_nginx
  rm -rf "$TMP"
}
testbed_up cb

# nginx as fwbench runs it (same objects, same settings), started here for the peers.
mkdir -p "$TMP/root/bytes"
head -c 512 /dev/zero >"$TMP/root/bytes/512"
head -c $((8 << 20)) /dev/zero >"$TMP/root/bytes/8388608"
chmod -R a+rX "$TMP"
cat >"$TMP/nginx.conf" <<EOF
daemon off; master_process on; worker_processes 1; pid $TMP/nginx.pid; error_log $TMP/error.log;
events { worker_connections 16384; }
http { access_log off; sendfile on; tcp_nopush on; keepalive_requests 100000;
  client_body_temp_path $TMP/cb; proxy_temp_path $TMP/pt; fastcgi_temp_path $TMP/ft;
  uwsgi_temp_path $TMP/ut; scgi_temp_path $TMP/st;
  server { listen 198.19.0.2:21000 backlog=4096; root $TMP/root; location / { } } }
EOF
start_nginx() {
  ip netns exec "$SRV" nginx -c "$TMP/nginx.conf" -p "$TMP" -e "$TMP/error.log" &
  NGX=$!
  for _ in $(seq 50); do
    ip netns exec "$CLI" curl -s -o /dev/null http://198.19.0.2:21000/bytes/512 && return 0
    sleep 0.1
  done
  echo "nginx did not start: $(tail -3 "$TMP/error.log")" >&2
  exit 1
}
ab_rate() { # concurrency → requests/s
  ip netns exec "$CLI" ab -q -n "$N" -c "$1" http://198.19.0.2:21000/bytes/512 |
    awk '/Requests per second/ {print $4}'
}
fw_rate() { # fwbench args… → sessions/s
  "$F" "$@" --testbed "$NAME" --no-store --json | json 'v["result"]["sessions_per_s"]'
}

echo "== 1. sessions/s against nginx (GET 512 B, new connection each), N=$N"
for c in 1 8; do
  start_nginx
  ab_c=$(ab_rate "$c")
  stop_nginx
  fw_c=$(fw_rate http --size 512 --count "$N" -p "$c" --server-program nginx)
  echo "  parallel $c: ab $ab_c/s   fwbench $fw_c/s   ratio fwbench/ab $(ratio "$fw_c" "$ab_c")"
done
own=$(fw_rate sessions --count "$N")
own8=$(fw_rate sessions --count "$N" -p 8)
echo "  fwbench's own pair (sessions, 64 B → 512 B): sequential $own/s, 8 at once $own8/s"

echo "== 2. 8 MiB download from nginx, 30 downloads"
start_nginx
curl_ms=$(for _ in $(seq 30); do
  ip netns exec "$CLI" curl -s -o /dev/null -w '%{time_total}\n' http://198.19.0.2:21000/bytes/8388608
done | awk '{s += $1} END {printf "%.3f", s / NR * 1000}')
stop_nginx
fw_ms=$("$F" http --size 8M --count 30 --server-program nginx --testbed "$NAME" --no-store --json |
  json 'v["result"]["ttlb"]["mean_ns"] / 1e6')
fwcurl_ms=$("$F" http --size 8M --count 30 --server-program nginx --client-program curl --testbed "$NAME" --no-store --json |
  json 'v["result"]["ttlb"]["mean_ns"] / 1e6')
echo "  curl loop (time_total) $curl_ms ms   fwbench client $fw_ms ms   fwbench --client-program curl $fwcurl_ms ms"
echo "  ratio fwbench/curl $(ratio "$fw_ms" "$curl_ms")   (fwbench-driven curl / curl loop $(ratio "$fwcurl_ms" "$curl_ms"))"
