#!/usr/bin/env bash
# Installs on Debian / Ubuntu what scripts/numa-rig.sh needs: QEMU for x86 (qemu-system-x86), a
# kernel image to boot (linux-image-amd64; its modules are not needed), a static busybox for the
# guest's shell and cpio to pack the initramfs.
# Idempotent: prints nothing and touches nothing when everything is already there. Runs as root,
# or through sudo otherwise.
set -euo pipefail
. "$(dirname "$0")/lib/install.sh"
install_packages install-rig.sh \
  "install qemu-system-x86_64, a kernel image and a static busybox by hand" \
  qemu-system-x86 linux-image-amd64 busybox-static cpio
