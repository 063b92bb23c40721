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
# nginx and curl: the external HTTP pair (`fwbench http --server-program nginx
# --client-program curl`); fwbench runs its own nginx instances inside the testbed.
# openssh-server: the remote-testbed tests run their own sshd in namespaces
# (crates/fwbench/tests/remote.rs); the system's sshd is left stopped.
# ufw: the import tests generate a real ufw ruleset in a scratch network and mount
# namespace (crates/fwbench/tests/import_corpus.rs); the host's ufw stays disabled.
# clang, llvm, libbpf-dev: build the BPF program of the xdp and tc-bpf engines
# (crates/firewall/build.rs); bpftool: their tests check nothing stays attached.
PKGS=(iproute2 procps util-linux nftables iptables ipset conntrack iperf3 sockperf sqlite3 gcc libc6-dev pkg-config nginx curl apache2-utils openssh-client openssh-server ufw ethtool clang llvm libbpf-dev bpftool)
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
  # ufw's package enables its boot service; with ENABLED=no in /etc/ufw/ufw.conf it
  # changes nothing, and fwbench never runs the host's ufw.
  # Installing nginx may start the system's web server on port 80; fwbench never uses
  # it (it starts its own instances in its namespaces), so stop it again if we started it.
  if printf '%s\n' "${missing[@]}" | grep -qx nginx; then
    if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet nginx 2>/dev/null; then
      systemctl disable --now nginx >/dev/null 2>&1 || true
    elif [ -x /etc/init.d/nginx ]; then
      /etc/init.d/nginx stop >/dev/null 2>&1 || true
    fi
  fi
  # Likewise the system's sshd: the tests start their own on test addresses only.
  if printf '%s\n' "${missing[@]}" | grep -qx openssh-server; then
    if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet ssh 2>/dev/null; then
      systemctl disable --now ssh ssh.socket >/dev/null 2>&1 || true
    elif [ -x /etc/init.d/ssh ]; then
      /etc/init.d/ssh stop >/dev/null 2>&1 || true
    fi
  fi
fi

# Debian 12's own rustc is 1.63; fwbench needs 1.82 or newer (e.g. from rustup).
need=82
minor=$(rustc --version 2>/dev/null | sed -n 's/^rustc 1\.\([0-9]*\).*/\1/p')
if [ -z "$minor" ] || [ "$minor" -lt "$need" ]; then
  echo "setup.sh: fwbench needs Rust 1.$need or newer; found: $(rustc --version 2>/dev/null || echo none)." >&2
  echo "setup.sh: install a current toolchain (https://rustup.rs) and rerun." >&2
  exit 2
fi

echo "setup.sh: building fwbench (release)" >&2
cargo build --release --locked -q 2>/dev/null || cargo build --release -q
echo "setup.sh: ready: ./target/release/fwbench" >&2
