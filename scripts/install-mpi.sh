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
. "$(dirname "$0")/lib/install.sh"
install_packages install-mpi.sh "install MPI with its headers and libclang by hand" \
  "${mpi_pkgs[@]}" pkg-config libclang-dev clang
[ -n "$INSTALLED" ] || exit 0
echo "install-mpi.sh: done ($(mpirun --version 2>/dev/null | grep -m 1 -i version || true))"
