# Sourced after scripts/lib/host-tools.sh by the Gradle-free Android scripts
# (build-android-app.sh, test-android-robolectric.sh): fetches the locked Maven artifacts and
# unpacks the AARs, installs Debian's aapt2, zipalign and apksigner, and finds Java 17.
#
#   ensure_android_artifacts   sets ANDROID_ARTIFACTS: one file per lock row, named
#                              group.artifact-version.type (no colon: the names go into
#                              classpaths), each AAR also unpacked into a directory of that name
#                              without .aar
#   android_artifact G:A:V     prints the path of that row's file (an AAR's directory)
#   ensure_android_build_tools sets AAPT2, ZIPALIGN, APKSIGNER, D8_JAR, ANDROID_JAR
#   ensure_java17              sets JAVA17 (Robolectric 4.14's ASM cannot read Java 25's classes)

ANDROID_LOCK=android/compose-robolectric.lock.tsv
ANDROID_ALL=org.robolectric:android-all:14-robolectric-10818077

# The lock list, read as "G:A:V TYPE" lines, without comments and without the rows that carry
# no file (a POM that only groups others).
android_lock_rows() {
  grep -v '^#' "$ANDROID_LOCK" | awk -F'\t' 'NF == 2 && $2 != "pom" { print $1, $2 }'
}

ensure_android_artifacts() {
  require_command mvn "install Maven (Debian: apt-get install maven); it fetches the locked Android libraries from Maven Central"
  # One directory for every lock list: a row names one immutable file, so only the rows whose
  # file is missing are fetched (a changed list fetches just what it adds).
  local dir="$HARNESS_TOOLS_DIR/android-artifacts"
  ANDROID_ARTIFACTS="$dir/files"
  mkdir -p "$ANDROID_ARTIFACTS"
  local coordinate type group artifact version missing=()
  while read -r coordinate type; do
    [ -f "$ANDROID_ARTIFACTS/$(artifact_name "$coordinate").$type" ] || missing+=("$coordinate $type")
  done < <(android_lock_rows)
  [ "${#missing[@]}" -eq 0 ] && return 0
  echo "fetching ${#missing[@]} locked Android libraries ($ANDROID_LOCK) into $dir (the android-all jars are large: about 150 MB each)"
  # maven-dependency-plugin's copy goal fetches exactly the listed files: no POM is resolved,
  # so the version ranges that name unserved versions never reach a resolver.
  local work="$dir/fetch"
  rm -rf "$work"
  mkdir -p "$work/files"
  {
    echo '<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>'
    echo '<groupId>edu.pku.harness</groupId><artifactId>android-lock</artifactId><version>0</version><packaging>pom</packaging>'
    echo '<build><plugins><plugin><groupId>org.apache.maven.plugins</groupId><artifactId>maven-dependency-plugin</artifactId><version>3.8.1</version>'
    echo "<configuration><outputDirectory>$work/files</outputDirectory><artifactItems>"
    local row
    for row in "${missing[@]}"; do
      read -r coordinate type <<<"$row"
      IFS=: read -r group artifact version <<<"$coordinate"
      echo "<artifactItem><groupId>$group</groupId><artifactId>$artifact</artifactId><version>$version</version><type>$type</type><destFileName>$(artifact_name "$coordinate").$type</destFileName></artifactItem>"
    done
    echo '</artifactItems></configuration></plugin></plugins></build></project>'
  } >"$work/pom.xml"
  local log="$work/mvn.log"
  if ! mvn -B -q -f "$work/pom.xml" dependency:copy -Dmaven.repo.local="$work/m2" >"$log" 2>&1; then
    cat "$log" >&2
    echo "$(basename "$0"): Maven could not fetch the files of $ANDROID_LOCK (log: $log)" >&2
    exit 1
  fi
  # The AARs unpacked once: classes.jar (and libs/*.jar) to compile against, res/ for aapt2,
  # AndroidManifest.xml for the package name and the merged manifest, jni/ for JNA's natives.
  # Each file is moved in only when whole, so an interrupted fetch leaves nothing half there.
  local file
  for file in "$work"/files/*; do
    if [ "${file%.aar}" != "$file" ]; then
      rm -rf "${file%.aar}"
      unzip -q -o "$file" -d "${file%.aar}"
      mv "${file%.aar}" "$ANDROID_ARTIFACTS/"
    fi
    mv "$file" "$ANDROID_ARTIFACTS/"
  done
  rm -rf "$work"
}

# group:artifact:version -> group.artifact-version
artifact_name() {
  local group artifact version
  IFS=: read -r group artifact version <<<"$1"
  echo "$group.$artifact-$version"
}

android_artifact() {
  local base
  base="$ANDROID_ARTIFACTS/$(artifact_name "$1")"
  if [ -d "$base" ]; then echo "$base"; return; fi
  [ -f "$base.jar" ] || { echo "$(basename "$0"): $1 is not in $ANDROID_LOCK" >&2; exit 1; }
  echo "$base.jar"
}

# What the app ships of the locked set: all but the test libraries and what only they need.
ANDROID_TEST_ONLY='^(androidx\.test[^:]*|org\.robolectric|junit|org\.hamcrest|org\.ow2\.asm|com\.google\.(guava|testparameterinjector|auto\.value|errorprone|code\.findbugs|j2objc)|com\.ibm\.icu|org\.bouncycastle|org\.conscrypt|com\.almworks\.sqlite4java|org\.yaml|com\.squareup|javax\.(inject|annotation)|org\.checkerframework):|^androidx\.compose\.ui:ui-test|^org\.jetbrains\.kotlinx:kotlinx-coroutines-test'

# The jars of the locked set, AARs' classes included, as a classpath; with "app", only what the
# app ships (ANDROID_TEST_ONLY left out).
android_classpath() {
  local which="${1:-all}" coordinate type cp=()
  while read -r coordinate type; do
    [ "$which" = app ] && grep -qE "$ANDROID_TEST_ONLY" <<<"$coordinate" && continue
    case "$coordinate" in "$ANDROID_ALL" | org.robolectric:android-all-instrumented:* | com.android.tools:r8:* | net.java.dev.jna:*) continue ;; esac
    # Kotlin's standard library is the compiler's own (newer); two on one classpath would clash.
    case "$coordinate" in org.jetbrains.kotlin:kotlin-stdlib*) continue ;; esac
    if [ "$type" = aar ]; then
      local unpacked
      unpacked="$ANDROID_ARTIFACTS/$(artifact_name "$coordinate")"
      [ -f "$unpacked/classes.jar" ] && cp+=("$unpacked/classes.jar")
      local lib
      for lib in "$unpacked"/libs/*.jar; do [ -f "$lib" ] && cp+=("$lib"); done
    else
      cp+=("$ANDROID_ARTIFACTS/$(artifact_name "$coordinate").$type")
    fi
  done < <(android_lock_rows)
  local IFS=:
  echo "${cp[*]}"
}

ensure_android_build_tools() {
  ensure_debian_packages aapt zipalign apksigner
  AAPT2="$(command -v aapt2)"
  ZIPALIGN="$(command -v zipalign)"
  APKSIGNER="$(command -v apksigner)"
  D8_JAR="$(android_artifact com.android.tools:r8:8.7.18)"
  ANDROID_JAR="$(android_artifact "$ANDROID_ALL")"
}

ensure_java17() {
  local home
  for home in /usr/lib/jvm/java-17-openjdk-* /usr/lib/jvm/*17*; do
    if [ -x "$home/bin/java" ]; then
      JAVA17="$home/bin/java"
      return 0
    fi
  done
  ensure_debian_packages openjdk-17-jdk-headless
  JAVA17="$(ls /usr/lib/jvm/java-17-openjdk-*/bin/java | head -1)"
}
