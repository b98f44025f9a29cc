#!/usr/bin/env bash
# Installs on Debian / Ubuntu what scripts/numa-rig.sh needs: QEMU for x86 (qemu-system-x86), a
# kernel image to boot (linux-image-amd64; its modules are not needed), a static busybox for the
# guest's shell and cpio to pack the initramfs.
# Idempotent: prints nothing and touches nothing when everything is already there. Runs as root,
# or through sudo otherwise.
set -euo pipefail
pkgs=(qemu-system-x86 linux-image-amd64 busybox-static cpio)
command -v dpkg-query >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1 || {
  echo "install-rig.sh: needs Debian or Ubuntu (apt-get); elsewhere install qemu-system-x86_64, a kernel image and a static busybox by hand" >&2
  exit 2
}
missing=()
for p in "${pkgs[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [ "$status" = "install ok installed" ] || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
sudo=()
[ "$(id -u)" -eq 0 ] || sudo=(sudo)
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq >/dev/null
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
