# shellcheck shell=bash
# Sourced by toolchain/setup.sh (`setup.sh runsc`): gVisor, built from the Go module proxy and cached by version.
#   - runsc (GVISOR_VERSION), which toolchain/runsc.sh registers with the Docker engine;
#   - for the engine tests' Kubernetes node: gVisor's containerd shim (`containerd-shim-runsc-v1`, runtime type
#     io.containerd.runsc.v1, the `runsc` handler of the `gvisor` RuntimeClass), and containerd CONTAINERD_VERSION
#     with its runc shim, which the node runs instead of Debian's 1.6 (the 1.6 line cannot read the bootstrap answer
#     gVisor's shim gives; the 1.7 line can).
# The shim sets its own OOM score to -999 when it starts, and gives up when the kernel refuses; root without
# CAP_SYS_RESOURCE (a container, as on this project's CI machines) may not lower a score. The node's shim is built
# from a copy of the module with that score left at 0 (the default), in a cache folder of its own; nothing else in
# gVisor changes, and runsc itself is built from the module as served.

runsc_dir="$(cached_bin_dir "$RUNSC_CACHE_FOLDER" "$GVISOR_VERSION")"
runsc_bin="$runsc_dir/runsc"
runsc_shim_bin="$(cached_bin_dir "$RUNSC_SHIM_CACHE_FOLDER" "$GVISOR_VERSION")/containerd-shim-runsc-v1"
containerd_dir="$(cached_bin_dir "$CONTAINERD_CACHE_FOLDER" "$CONTAINERD_VERSION")"

runsc_cached() {
  [ -x "$runsc_bin" ] && [ -x "$runsc_shim_bin" ] && [ -x "$containerd_dir/containerd" ] \
    && [ -x "$containerd_dir/containerd-shim-runc-v2" ]
}

# The line of gVisor's shim manager that sets the shim's own OOM score, and what the node's build puts there.
SHIM_OOM_FILE=pkg/shim/v1/manager.go
SHIM_OOM_FROM=$'\toomScoreMax = -999'
SHIM_OOM_TO=$'\toomScoreMax = 0'

build_runsc() {
  local dir t src
  new_workdir
  t="$(now)"
  say "building runsc (gVisor v$GVISOR_VERSION) from the Go module proxy (about a minute; cached afterwards)..."
  (
    cd "$dir" || exit 1
    printf 'module sandbox-projects.local/runsc-build\n\ngo 1.26\n\nrequire gvisor.dev/gvisor %s\n' \
      "v$GVISOR_VERSION" >go.mod
    "$go" get "gvisor.dev/gvisor/runsc@v$GVISOR_VERSION" "gvisor.dev/gvisor/shim@v$GVISOR_VERSION" || exit 1
    mkdir -p out || exit 1
    [ -x "$runsc_bin" ] || "$go" build -trimpath -ldflags "-s -w" -o out/runsc gvisor.dev/gvisor/runsc || exit 1
    if [ ! -x "$runsc_shim_bin" ]; then
      src="$("$go" list -m -f '{{.Dir}}' gvisor.dev/gvisor)" || exit 1
      cp -r "$src" gvisor && chmod -R u+w gvisor || exit 1
      grep -qxF "$SHIM_OOM_FROM" "gvisor/$SHIM_OOM_FILE" \
        || { echo "gVisor's $SHIM_OOM_FILE no longer has the line the node's shim build changes" >&2; exit 1; }
      sed -i "s/^${SHIM_OOM_FROM}\$/${SHIM_OOM_TO}/" "gvisor/$SHIM_OOM_FILE" || exit 1
      "$go" mod edit -replace gvisor.dev/gvisor=./gvisor || exit 1
      "$go" build -trimpath -ldflags "-s -w" -o out/containerd-shim-runsc-v1 gvisor.dev/gvisor/shim || exit 1
    fi
  ) >&2 || return 1
  [ -x "$runsc_bin" ] || install_bin "$dir/out/runsc" "$runsc_bin"
  [ -x "$runsc_shim_bin" ] || install_bin "$dir/out/containerd-shim-runsc-v1" "$runsc_shim_bin"
  say "built runsc ($(size_of "$runsc_bin")) and the node's containerd-shim-runsc-v1 ($(size_of "$runsc_shim_bin")) in $(elapsed "$t")"
}

build_containerd() {
  local dir t
  [ -x "$containerd_dir/containerd" ] && [ -x "$containerd_dir/containerd-shim-runc-v2" ] && return 0
  new_workdir
  t="$(now)"
  say "building containerd v$CONTAINERD_VERSION for the test node from the Go module proxy (a few minutes; cached afterwards)..."
  (
    cd "$dir" || exit 1
    printf 'module sandbox-projects.local/containerd-build\n\ngo 1.26\n\nrequire github.com/containerd/containerd %s\n' \
      "v$CONTAINERD_VERSION" >go.mod
    "$go" get "github.com/containerd/containerd/cmd/containerd@v$CONTAINERD_VERSION" \
      "github.com/containerd/containerd/cmd/containerd-shim-runc-v2@v$CONTAINERD_VERSION" || exit 1
    mkdir -p out || exit 1
    "$go" build -trimpath -ldflags "-s -w" -o out/ github.com/containerd/containerd/cmd/containerd \
      github.com/containerd/containerd/cmd/containerd-shim-runc-v2
  ) >&2 || return 1
  install_bin "$dir/out/containerd-shim-runc-v2" "$containerd_dir/containerd-shim-runc-v2"
  install_bin "$dir/out/containerd" "$containerd_dir/containerd"
  say "built containerd v$CONTAINERD_VERSION and its runc shim in $(elapsed "$t")"
}

locked_build_runsc() {
  runsc_cached && return 0
  find_go || return 1
  if [ ! -x "$runsc_bin" ] || [ ! -x "$runsc_shim_bin" ]; then build_runsc || return 1; fi
  build_containerd
}

ensure_runsc() {
  if runsc_cached; then
    say "runsc, the node's containerd-shim-runsc-v1 and containerd v$CONTAINERD_VERSION: cached ($runsc_dir, $containerd_dir)"
    return 0
  fi
  if with_lock runsc locked_build_runsc; then return 0; fi
  missing+=("runsc (gVisor v$GVISOR_VERSION) and the test node's containerd v$CONTAINERD_VERSION: the build from the Go module proxy failed (see above)")
}
