# shellcheck shell=bash
# Sourced by toolchain/setup.sh: gVisor's runsc (`setup.sh runsc`), GVISOR_VERSION built from gvisor.dev/gvisor and
# cached. toolchain/runsc.sh registers it with the Docker engine.

runsc_dir="$(cached_bin_dir "$RUNSC_CACHE_FOLDER" "$GVISOR_VERSION")"
runsc_bin="$runsc_dir/runsc"

build_runsc() {
  local dir t
  new_workdir
  t="$(now)"
  say "building runsc (gVisor v$GVISOR_VERSION) from the Go module proxy (about a minute; cached afterwards)..."
  (
    cd "$dir" || exit 1
    printf 'module sandbox-projects.local/runsc-build\n\ngo 1.26\n\nrequire gvisor.dev/gvisor %s\n' \
      "v$GVISOR_VERSION" >go.mod
    "$go" get "gvisor.dev/gvisor/runsc@v$GVISOR_VERSION" || exit 1
    mkdir -p out || exit 1
    "$go" build -trimpath -ldflags "-s -w" -o out/runsc gvisor.dev/gvisor/runsc
  ) >&2 || return 1
  install_bin "$dir/out/runsc" "$runsc_bin"
  say "built runsc ($(size_of "$runsc_bin")) in $(elapsed "$t")"
}

locked_build_runsc() {
  [ -x "$runsc_bin" ] && return 0
  find_go && build_runsc
}

ensure_runsc() {
  if [ -x "$runsc_bin" ]; then
    say "runsc: gVisor v$GVISOR_VERSION cached ($runsc_bin)"
    return 0
  fi
  if with_lock runsc locked_build_runsc; then return 0; fi
  missing+=("runsc (gVisor v$GVISOR_VERSION): the build from gvisor.dev/gvisor failed (see above)")
}
