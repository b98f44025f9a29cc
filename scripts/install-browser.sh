#!/usr/bin/env bash
# Installs a headless-capable Chromium from the distribution's packages (Debian: `chromium`;
# Ubuntu: `chromium-browser`), so `report.html` can be rendered to PNG and looked at:
#   chromium --headless --no-sandbox --screenshot=report.png --window-size=1280,2000 report.html
# Quiet and untouched when a browser is already there. Exits 0 with a one-line message when it
# cannot install one (no apt-get, no root, no package), so a check that needs the browser can
# skip with that message. Prints the browser's path when it installs one.
set -uo pipefail

for b in chromium chromium-browser google-chrome; do
  command -v "$b" >/dev/null 2>&1 && exit 0
done

say() { echo "install-browser.sh: $*" >&2; }

if ! command -v apt-get >/dev/null 2>&1; then
  say "no apt-get here: install Chromium by hand to render report.html (skipping)"
  exit 0
fi
sudo=()
if [ "$(id -u)" != 0 ]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    sudo=(sudo -n)
  else
    say "not root and no sudo: install Chromium by hand to render report.html (skipping)"
    exit 0
  fi
fi

export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq >/dev/null 2>&1 || true
for pkg in chromium chromium-browser; do
  if "${sudo[@]}" apt-get install -y -qq --no-install-recommends "$pkg" fonts-dejavu-core >/dev/null 2>&1; then
    for b in chromium chromium-browser; do
      if command -v "$b" >/dev/null 2>&1; then
        command -v "$b"
        exit 0
      fi
    done
  fi
done
say "could not install chromium from the distribution's packages: report.html is not rendered (skipping)"
exit 0
