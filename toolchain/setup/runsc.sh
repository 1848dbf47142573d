# shellcheck shell=bash
# Sourced by toolchain/setup.sh: gVisor's runsc and its containerd shim (`setup.sh runsc`), GVISOR_VERSION built
# from gvisor.dev/gvisor in one `go build` and cached. toolchain/runsc.sh registers runsc with the Docker engine; the
# engine tests' Kubernetes node gives its containerd the shim (`containerd-shim-runsc-v1`, runtime type
# io.containerd.runsc.v1) for the `gvisor` RuntimeClass.

runsc_dir="$(cached_bin_dir "$RUNSC_CACHE_FOLDER" "$GVISOR_VERSION")"
runsc_bin="$runsc_dir/runsc"
runsc_shim_bin="$runsc_dir/containerd-shim-runsc-v1"

runsc_cached() { [ -x "$runsc_bin" ] && [ -x "$runsc_shim_bin" ]; }

build_runsc() {
  local dir t
  new_workdir
  t="$(now)"
  say "building runsc (gVisor v$GVISOR_VERSION) from the Go module proxy (about a minute; cached afterwards)..."
  (
    cd "$dir" || exit 1
    printf 'module sandbox-projects.local/runsc-build\n\ngo 1.26\n\nrequire gvisor.dev/gvisor %s\n' \
      "v$GVISOR_VERSION" >go.mod
    "$go" get "gvisor.dev/gvisor/runsc@v$GVISOR_VERSION" "gvisor.dev/gvisor/shim@v$GVISOR_VERSION" || exit 1
    mkdir -p out || exit 1
    "$go" build -trimpath -ldflags "-s -w" -o out/runsc gvisor.dev/gvisor/runsc || exit 1
    "$go" build -trimpath -ldflags "-s -w" -o out/containerd-shim-runsc-v1 gvisor.dev/gvisor/shim
  ) >&2 || return 1
  install_bin "$dir/out/containerd-shim-runsc-v1" "$runsc_shim_bin"
  install_bin "$dir/out/runsc" "$runsc_bin"
  say "built runsc ($(size_of "$runsc_bin")) and containerd-shim-runsc-v1 ($(size_of "$runsc_shim_bin")) in $(elapsed "$t")"
}

locked_build_runsc() {
  runsc_cached && return 0
  find_go && build_runsc
}

ensure_runsc() {
  if runsc_cached; then
    say "runsc, containerd-shim-runsc-v1: gVisor v$GVISOR_VERSION cached ($runsc_dir)"
    return 0
  fi
  if with_lock runsc locked_build_runsc; then return 0; fi
  missing+=("runsc (gVisor v$GVISOR_VERSION): the build from gvisor.dev/gvisor failed (see above)")
}
