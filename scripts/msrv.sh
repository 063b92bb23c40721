#!/usr/bin/env bash
# The minimum supported Rust version (MSRV), computed from the locked dependency tree:
# the highest `rust-version` any package in Cargo.lock declares (as `cargo metadata`
# reads it from each crate's Cargo.toml in ~/.cargo/registry/src/*/<pkg>/), restricted
# to the packages this host's platform builds (normal, build and dev dependencies;
# the workspace's own crates, which inherit the declared value, left out).
#
#   bash scripts/msrv.sh          print the MSRV, fail (exit 1) when Cargo.toml's
#                                 workspace rust-version is lower; then, if that
#                                 toolchain is installed with rustup, build and test-
#                                 compile with it (`cargo +<msrv> check --all-targets`)
#   bash scripts/msrv.sh --print  print only the computed MSRV (e.g. 1.88)
#
# Our own code is checked against the declared version by clippy's
# `incompatible_msrv` lint (std APIs newer than rust-version), which CI runs with
# -D warnings.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v cargo >/dev/null 2>&1 && [ -x "$HOME/.cargo/bin/cargo" ]; then
  export PATH="$HOME/.cargo/bin:$PATH"
fi
for tool in cargo jq; do
  command -v "$tool" >/dev/null 2>&1 || { echo "msrv.sh: needs $tool (bash scripts/setup.sh installs it)" >&2; exit 2; }
done

host=$(rustc -vV | sed -n 's/^host: //p')
# version<TAB>package version, for every resolved package that declares one.
table=$(cargo metadata --locked --format-version 1 --filter-platform "$host" |
  jq -r '([.resolve.nodes[].id]) as $ids
         | .packages[] | select(.rust_version != null and .source != null)
         | select(.id as $i | $ids | index($i))
         | "\(.rust_version)\t\(.name) \(.version)"' |
  sort -t. -k1,1n -k2,2n -k3,3n)
# Compare as major.minor (a crate's "1.85.0" is 1.85).
msrv=$(printf '%s\n' "$table" | tail -n1 | cut -f1 | awk -F. '{print $1"."$2}')
by=$(printf '%s\n' "$table" | awk -F'\t' -v m="$msrv" '{split($1, v, "."); if (v[1]"."v[2] == m) print $2}' | paste -sd, - | sed 's/,/, /g')

if [ "${1:-}" = "--print" ]; then
  echo "$msrv"
  exit 0
fi

declared=$(sed -n 's/^rust-version *= *"\([0-9.]*\)".*/\1/p' Cargo.toml | head -n1 | awk -F. '{print $1"."$2}')
echo "msrv.sh: the locked dependency tree needs Rust $msrv (set by: $by)"
echo "msrv.sh: Cargo.toml declares rust-version = \"$declared\""
lower() { # $1 < $2 as major.minor
  [ "$1" != "$2" ] && [ "$(printf '%s\n%s\n' "$1" "$2" | sort -t. -k1,1n -k2,2n | head -n1)" = "$1" ]
}
if [ -z "$declared" ] || lower "$declared" "$msrv"; then
  echo "msrv.sh: FAIL: rust-version ${declared:-(none)} is lower than $msrv, what Cargo.lock needs: set rust-version = \"$msrv\" in Cargo.toml (and in scripts/setup.sh's message, which reads it from there)" >&2
  exit 1
fi
if lower "$msrv" "$declared"; then
  echo "msrv.sh: note: the declared $declared is above the dependencies' $msrv (fwbench's own code may need it)"
fi

if command -v rustup >/dev/null 2>&1 && rustup toolchain list | grep -q "^$declared\(\.0\)\?-"; then
  tc=$(rustup toolchain list | grep "^$declared\(\.0\)\?-" | head -n1 | cut -d' ' -f1)
  echo "msrv.sh: building with toolchain $tc"
  CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target}/msrv" cargo "+$tc" check --workspace --all-targets --locked -q
  echo "msrv.sh: ok: the workspace builds with Rust $declared"
else
  echo "msrv.sh: toolchain $declared is not installed: verified by the computation above only (rustup toolchain install $declared to build with it)"
fi
