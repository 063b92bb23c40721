#!/usr/bin/env bash
# Set up fwbench on Debian 12 as root: system packages, then a release build.
# Idempotent; safe to rerun. Nothing is downloaded at run time afterwards.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$(id -u)" -ne 0 ]; then
  echo "setup.sh: run as root (it installs packages; fwbench itself needs root for namespaces)" >&2
  exit 2
fi

# Tools the testbed, the engines and the peer benchmarks use.
PKGS=(iproute2 procps util-linux nftables iptables ipset conntrack iperf3 sockperf sqlite3 gcc libc6-dev pkg-config)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ! command -v cargo >/dev/null 2>&1 && [ -x "$HOME/.cargo/bin/cargo" ]; then
  export PATH="$HOME/.cargo/bin:$PATH"
fi
if ! command -v cargo >/dev/null 2>&1; then
  missing+=(cargo rustc)
fi
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup.sh: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${missing[@]}" >/dev/null
fi

echo "setup.sh: building fwbench (release)" >&2
cargo build --release --locked -q 2>/dev/null || cargo build --release -q
echo "setup.sh: ready: ./target/release/fwbench" >&2
