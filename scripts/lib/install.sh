# Sourced by the scripts/install-*.sh scripts: the Debian / Ubuntu package-install preamble they
# share. Defines one function:
#   install_packages NAME ELSEWHERE PACKAGE...
# installs whichever of the packages dpkg does not list as installed, through apt-get, as root or
# through sudo. NAME prefixes its messages; ELSEWHERE says what to install by hand where there is
# no apt-get, and it sets INSTALLED to the packages it installed (empty: none). Idempotent: prints
# nothing and touches nothing when every package is there.
# Exits 2 (bad environment, one line saying what to do) when it cannot install.
install_packages() {
  local name=$1 elsewhere=$2
  shift 2
  command -v dpkg-query >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1 || {
    echo "$name: needs Debian or Ubuntu (apt-get); elsewhere $elsewhere" >&2
    exit 2
  }
  local p status missing=()
  for p in "$@"; do
    status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
    [ "$status" = "install ok installed" ] || missing+=("$p")
  done
  INSTALLED=""
  [ ${#missing[@]} -eq 0 ] && return 0
  local as_root=()
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 || {
      echo "$name: not root and no sudo; run as root: apt-get install ${missing[*]}" >&2
      exit 2
    }
    as_root=(sudo)
  fi
  echo "$name: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  "${as_root[@]}" apt-get update -qq >/dev/null
  "${as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  INSTALLED="${missing[*]}"
}
