#!/usr/bin/env bash
# Set up fwbench: system packages, then a release build (./target/release/fwbench).
#
# Debian 12/13 and Ubuntu 22.04/24.04, as root or with sudo from a user:
#   sudo bash scripts/setup.sh     packages as root; the build runs as you, with your
#                                  rustup toolchain (~/.cargo/bin), so target/ is yours
#   bash scripts/setup.sh          (as root) the same with root's toolchain
# Idempotent (installs only what is missing; rerunning only rebuilds). Packages come
# from the distribution's mirrors, crates from crates.io; nothing downloads at run time.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { echo "setup.sh: $*" >&2; }

if [ "$(id -u)" -ne 0 ]; then
  say "run as root or with sudo (it installs packages; fwbench itself needs root for namespaces):"
  say "  sudo bash scripts/setup.sh"
  exit 2
fi

# The distribution (only to name it in messages and to find versioned rust packages).
distro=unknown
if [ -r /etc/os-release ]; then
  distro=$(. /etc/os-release && echo "${ID:-unknown} ${VERSION_ID:-}")
fi
case "$distro" in
  "debian 12" | "debian 13" | "ubuntu 22.04" | "ubuntu 24.04") ;;
  *) say "note: tested on Debian 12/13 and Ubuntu 22.04/24.04; this is '$distro' (trying anyway)" ;;
esac

# Who builds: the user who called sudo (their toolchain, their target/), else root.
build_user=root
build_home=${HOME:-/root}
if [ -n "${SUDO_USER:-}" ] && [ "$SUDO_USER" != root ]; then
  build_user=$SUDO_USER
  build_home=$(getent passwd "$SUDO_USER" | cut -d: -f6)
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
# jq: scripts/msrv.sh. python3: the tested pandas/sqlite3 example (docs/results.md).
PKGS=(iproute2 procps util-linux nftables iptables ipset conntrack iperf3 sqlite3 gcc libc6-dev
  pkg-config curl openssh-client openssh-server jq python3 ufw ethtool clang llvm libbpf-dev bpftool)
# Wanted but not required (Ubuntu has sockperf in universe only): skipped with a note.
# python3-pandas: the pandas example of docs/results.md (its test falls back to sqlite3).
# python3-prometheus-client: the OpenMetrics reference parser that reads back
# `fwbench report -f openmetrics` in the tests (docs/dashboards.md; skipped visibly
# without it, which fails CI as root).
OPTIONAL=(sockperf nginx apache2-utils python3-pandas python3-prometheus-client)

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
missing=()
for p in "${PKGS[@]}" "${OPTIONAL[@]}"; do
  installed "$p" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq

  # Only what the mirrors have: a required package they lack is an error, an optional
  # one a note (apt-get would otherwise refuse the whole list).
  want=()
  for p in "${missing[@]}"; do
    if apt-cache show "$p" >/dev/null 2>&1; then
      want+=("$p")
    elif printf '%s\n' "${OPTIONAL[@]}" | grep -qx "$p"; then
      say "note: package $p is not available here (on Ubuntu: enable 'universe'); the features using it report 'unavailable'"
    else
      say "package $p is not available from this system's apt sources ($distro)"
      exit 1
    fi
  done
  if [ ${#want[@]} -gt 0 ]; then
    say "installing ${want[*]}"
    apt-get install -y -qq "${want[@]}" >/dev/null
  fi
  # Installing nginx may start the system's web server on port 80; fwbench never uses
  # it (it starts its own instances in its namespaces), so stop it again if we started it.
  if printf '%s\n' "${want[@]}" | grep -qx nginx; then
    if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet nginx 2>/dev/null; then
      systemctl disable --now nginx >/dev/null 2>&1 || true
    elif [ -x /etc/init.d/nginx ]; then
      /etc/init.d/nginx stop >/dev/null 2>&1 || true
    fi
  fi
  # Likewise the system's sshd: the tests start their own on test addresses only.
  if printf '%s\n' "${want[@]}" | grep -qx openssh-server; then
    if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet ssh 2>/dev/null; then
      systemctl disable --now ssh ssh.socket >/dev/null 2>&1 || true
    elif [ -x /etc/init.d/ssh ]; then
      /etc/init.d/ssh stop >/dev/null 2>&1 || true
    fi
  fi
fi

# The minimum Rust version is Cargo.toml's rust-version (scripts/msrv.sh checks in CI
# that it is what Cargo.lock needs).
need=$(sed -n 's/^rust-version *= *"\([0-9.]*\)".*/\1/p' Cargo.toml | head -n1)
need_minor=$(echo "$need" | cut -d. -f2)
minor_of() { sed -n 's/^\(rustc\|cargo\) 1\.\([0-9]*\).*/\2/p'; }

# Run a command as the build user, with that user's PATH (rustup lives in ~/.cargo/bin).
as_builder() {
  local path="$build_home/.cargo/bin:/usr/local/bin:/usr/bin:/bin"
  if [ "$build_user" = root ]; then
    env PATH="$path:$PATH" "$@"
  else
    # runuser is in util-linux (no sudo configuration needed); HOME so rustup finds its files.
    runuser -u "$build_user" -- env HOME="$build_home" PATH="$path" "$@"
  fi
}

# Find a toolchain new enough: the build user's (rustup or otherwise on their PATH);
# else the distribution's (rustc/cargo, or Ubuntu's versioned rustc-1.NN/cargo-1.NN)
# when its version is new enough. Debian's own (12: 1.63, 13: 1.85) is too old today.
cargo_cmd=()
have=$(as_builder cargo --version 2>/dev/null || true)
have_rustc=$(as_builder rustc --version 2>/dev/null || true)
if [ -n "$have" ] && [ "$(echo "$have_rustc" | minor_of)" -ge "$need_minor" ] 2>/dev/null; then
  cargo_cmd=(cargo)
else
  # The distribution's packages, newest first: cargo, then cargo-1.NN (Ubuntu).
  best=""
  cand=$(apt-cache policy rustc 2>/dev/null | sed -n 's/^ *Candidate: \([0-9]*\.[0-9]*\).*/\1/p')
  if [ -n "$cand" ] && [ "$(echo "$cand" | cut -d. -f2)" -ge "$need_minor" ] 2>/dev/null; then
    best=plain
  else
    for n in $(apt-cache pkgnames cargo-1. 2>/dev/null | sed -n 's/^cargo-1\.\([0-9]*\)$/\1/p' | sort -rn); do
      if [ "$n" -ge "$need_minor" ] && apt-cache show "rustc-1.$n" >/dev/null 2>&1; then
        best="1.$n"
        break
      fi
    done
  fi
  case "$best" in
    plain)
      say "installing the distribution's rustc and cargo ($cand)"
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq rustc cargo >/dev/null
      cargo_cmd=(cargo)
      ;;
    1.*)
      say "installing the distribution's rustc-$best and cargo-$best"
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "rustc-$best" "cargo-$best" >/dev/null
      cargo_cmd=(env "RUSTC=rustc-$best" "cargo-$best")
      ;;
    *)
      say "fwbench needs Rust $need or newer (rust-version in Cargo.toml; Cargo.lock's crates need it)."
      say "found: ${have_rustc:-no rustc} for user $build_user; the distribution offers ${cand:-none}."
      if [ "$build_user" = root ]; then
        say "get it (for example with rustup), then rerun this script:"
      else
        say "get it as $build_user (no root needed), then rerun this script with sudo:"
      fi
      if [ -n "$have" ] && as_builder rustup --version >/dev/null 2>&1; then
        say "  rustup update stable        (or: rustup toolchain install $need && rustup default $need)"
      else
        say "  curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y"
        say "  (or see https://rustup.rs; the toolchain lands in ~$build_user/.cargo/bin, which this script finds)"
      fi
      exit 2
      ;;
  esac
fi

say "building fwbench (release) as $build_user with $(as_builder "${cargo_cmd[@]}" --version)"
# A target/ left owned by root by an earlier run would stop the user's build.
if [ "$build_user" != root ] && [ -d target ] && [ "$(stat -c %U target)" = root ]; then
  chown -R "$build_user": target
fi
if ! as_builder "${cargo_cmd[@]}" build --release --locked -q; then
  say "the build failed (above); with --locked it uses exactly Cargo.lock's crate versions"
  exit 1
fi
say "ready: ./target/release/fwbench (run it as root: sudo ./target/release/fwbench …)"
