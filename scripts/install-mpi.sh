#!/usr/bin/env bash
# Installs on Debian / Ubuntu what `cargo build --features mpi` needs: an MPI implementation with
# its headers and compiler wrapper (MPICH by default), and what the `mpi` crate's build uses to
# find and bind it (pkg-config, libclang for bindgen, a C compiler).
#   scripts/install-mpi.sh              # MPICH (mpich libmpich-dev)
#   MPI_IMPL=openmpi scripts/install-mpi.sh   # Open MPI (openmpi-bin libopenmpi-dev)
# Idempotent: prints nothing and touches nothing when everything is already there. Runs as root,
# or through sudo otherwise.
set -euo pipefail

impl=${MPI_IMPL:-mpich}
case "$impl" in
  mpich) mpi_pkgs=(mpich libmpich-dev) ;;
  openmpi) mpi_pkgs=(openmpi-bin libopenmpi-dev) ;;
  *) echo "install-mpi.sh: MPI_IMPL must be mpich or openmpi, got \`$impl\`" >&2; exit 2 ;;
esac
pkgs=("${mpi_pkgs[@]}" pkg-config libclang-dev clang)

command -v dpkg-query >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1 || {
  echo "install-mpi.sh: needs Debian or Ubuntu (apt-get); elsewhere install MPI with its headers and libclang by hand" >&2
  exit 2
}

missing=()
for p in "${pkgs[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [ "$status" = "install ok installed" ] || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -eq 0 ]; then
  as_root=()
elif command -v sudo >/dev/null 2>&1; then
  as_root=(sudo)
else
  echo "install-mpi.sh: not root and no sudo; run as root: apt-get install ${missing[*]}" >&2
  exit 2
fi

echo "install-mpi.sh: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${as_root[@]}" apt-get update -qq
"${as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "install-mpi.sh: done ($(mpirun --version 2>/dev/null | grep -m 1 -i version || true))"
