# Sourced by the host Kotlin scripts: installs what they need when it is missing, quietly when
# it is present. Sets KOTLINC, KOTLIN_LIB, JNA_JAR, JUNIT_JARS.

# The Kotlin compiler from npm; its lib/ also holds kotlin-test and kotlinx-coroutines-core-jvm
# (1.8; Debian's 1.0 is too old for UniFFI's generated code).
KOTLIN_VERSION=2.4.20
HARNESS_TOOLS_DIR="${HARNESS_TOOLS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/pku-harness}"

require_command() {
  if ! command -v "$1" >/dev/null 2>&1; then
    echo "$(basename "$0"): $1 is not installed; $2" >&2
    exit 1
  fi
}

# Debian packages by name; apt-get as root, else through sudo.
ensure_debian_packages() {
  local missing=() pkg
  for pkg in "$@"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
  done
  [ "${#missing[@]}" -eq 0 ] && return 0
  local sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then sudo=(sudo); else
      echo "$(basename "$0"): needs the Debian packages ${missing[*]}; install them as root (apt-get install ${missing[*]})" >&2
      exit 1
    fi
  fi
  echo "installing Debian packages: ${missing[*]}"
  local log
  log="$(mktemp)"
  if ! { "${sudo[@]}" apt-get update -qq && DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"; } >"$log" 2>&1; then
    cat "$log" >&2
    echo "$(basename "$0"): apt-get could not install ${missing[*]}" >&2
    exit 1
  fi
  rm -f "$log"
}

ensure_kotlinc() {
  require_command java "install a JDK (17 or later)"
  require_command npm "install Node.js and npm (the Kotlin compiler comes from the npm package kotlin-compiler)"
  local dir="$HARNESS_TOOLS_DIR/kotlin-compiler-$KOTLIN_VERSION"
  local home="$dir/node_modules/kotlin-compiler"
  if [ ! -x "$home/bin/kotlinc" ]; then
    echo "installing kotlin-compiler $KOTLIN_VERSION from npm into $dir"
    mkdir -p "$dir"
    npm install --prefix "$dir" --no-save --no-audit --no-fund --loglevel=error "kotlin-compiler@$KOTLIN_VERSION" >/dev/null
  fi
  if ! grep -q "\"version\": \"$KOTLIN_VERSION\"" "$home/package.json"; then
    echo "$(basename "$0"): $home is not kotlin-compiler $KOTLIN_VERSION; remove $dir and run again" >&2
    exit 1
  fi
  KOTLINC="$home/bin/kotlinc"
  KOTLIN_LIB="$home/lib"
}

ensure_host_jars() {
  ensure_debian_packages libjna-java junit4
  JNA_JAR=/usr/share/java/jna.jar
  JUNIT_JARS=/usr/share/java/junit4.jar:/usr/share/java/hamcrest-core.jar
}

# kotlinc_cached OUT.jar CLASSPATH SOURCE…: compiles unless OUT.jar was built from exactly these
# sources, classpath (the jars' contents, not only their paths: the bindings are rebuilt in
# place), compiler and KOTLINC_FLAGS (extra options, e.g. a compiler plugin; a checksum beside
# it). A SOURCE is a directory or one .kt file.
kotlinc_cached() {
  local out="$1" classpath="$2"
  shift 2
  local sum jars
  IFS=: read -r -a jars <<<"$classpath"
  sum="$( { echo "$KOTLIN_VERSION ${KOTLINC_FLAGS:-} $classpath"; sha256sum "${jars[@]}" 2>/dev/null; find "$@" -type f -name '*.kt' -print0 | sort -z | xargs -0 sha256sum; } | sha256sum | cut -d' ' -f1)"
  if [ -f "$out" ] && [ "$(cat "$out.sum" 2>/dev/null)" = "$sum" ]; then
    return 0
  fi
  rm -f "$out" "$out.sum"
  mkdir -p "$(dirname "$out")"
  # shellcheck disable=SC2086 # KOTLINC_FLAGS is a list of options
  "$KOTLINC" -nowarn -jvm-target 17 ${KOTLINC_FLAGS:-} -cp "$classpath" -d "$out" "$@" 2>&1 | grep -v '^warning: ' >&2 || true
  [ -f "$out" ] || { echo "$(basename "$0"): kotlinc failed for $out" >&2; exit 1; }
  echo "$sum" >"$out.sum"
}
