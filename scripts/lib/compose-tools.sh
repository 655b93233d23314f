# Sourced after scripts/lib/host-tools.sh by the scripts that compile the shared Compose UI
# (android/ui) for the desktop JVM: installs what they need when it is missing, quietly when it
# is present. Sets COMPOSE_CP (the Compose Multiplatform desktop jars, from Maven Central) and
# COMPOSE_PLUGIN (the Compose compiler plugin that ships with KOTLINC); ensure_kotlinc first.

COMPOSE_POM=android/ui/desktop/pom.xml

ensure_compose_jars() {
  require_command mvn "install Maven (Debian: apt-get install maven); it fetches Compose Multiplatform from Maven Central"
  # The versions are pinned in the pom; a changed pom is a new cache directory.
  local sum dir
  sum="$(sha256sum "$COMPOSE_POM" | cut -c1-12)"
  dir="$HARNESS_TOOLS_DIR/compose-desktop-$sum"
  if [ ! -f "$dir/complete" ]; then
    echo "installing the Compose Multiplatform desktop libraries ($COMPOSE_POM) into $dir"
    rm -rf "$dir"
    mkdir -p "$dir"
    local log="$dir/mvn.log"
    # A local repository of its own, so that removing $dir removes every download. Kotlin's
    # standard library is the compiler's own (newer); two on one classpath would clash.
    if ! mvn -B -q -f "$COMPOSE_POM" dependency:copy-dependencies \
      -Dmaven.repo.local="$dir/m2" -DoutputDirectory="$dir/jars" \
      -DexcludeArtifactIds=kotlin-stdlib,kotlin-stdlib-jdk7,kotlin-stdlib-jdk8,kotlin-stdlib-common \
      >"$log" 2>&1; then
      cat "$log" >&2
      echo "$(basename "$0"): Maven could not fetch the dependencies of $COMPOSE_POM (log: $log)" >&2
      exit 1
    fi
    rm -rf "$dir/m2"
    touch "$dir/complete"
  fi
  COMPOSE_CP="$(find "$dir/jars" -name '*.jar' | sort | tr '\n' ':')$KOTLIN_LIB/kotlin-stdlib.jar"
  COMPOSE_PLUGIN="$KOTLIN_LIB/compose-compiler-plugin.jar"
  [ -f "$COMPOSE_PLUGIN" ] || {
    echo "$(basename "$0"): $COMPOSE_PLUGIN is missing; the Kotlin compiler $KOTLIN_VERSION from npm ships it" >&2
    exit 1
  }
  # Skia finds fonts through fontconfig; without a CJK font every Chinese character renders as
  # a box. WenQuanYi Micro Hei is the smallest Debian CJK font (5 MB against Noto CJK's 90 MB).
  ensure_debian_packages fontconfig fonts-wqy-microhei
}
