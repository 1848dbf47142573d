# shellcheck shell=bash
# Sourced by toolchain/setup.sh: kwok (`setup.sh kwok`), which keeps simulated nodes and takes their pods through
# their life (scheduled, running, succeeded) without running a container, for the scale benchmark and its smaller
# test (bench/kube-scale.ts, test/scale/): built from sigs.k8s.io/kwok's cmd/kwok at KWOK_VERSION and cached.

kwok_bin="$(cached_bin_dir "$KWOK_CACHE_FOLDER" "$KWOK_VERSION")/kwok"

build_kwok() {
  local dir t
  new_workdir
  t="$(now)"
  say "building kwok v$KWOK_VERSION from the Go module proxy (a few minutes; cached afterwards)..."
  (
    cd "$dir" || exit 1
    printf 'module sandbox-projects.local/kwok-build\n\ngo 1.26\n' >go.mod
    printf '//go:build tools\n\npackage build\n\nimport _ "sigs.k8s.io/kwok/cmd/kwok"\n' >tools.go
    "$go" get "sigs.k8s.io/kwok/cmd/kwok@v$KWOK_VERSION" || exit 1
    mkdir -p out || exit 1
    "$go" build -trimpath -ldflags "-s -w" \
      -o out/kwok sigs.k8s.io/kwok/cmd/kwok
  ) >&2 || return 1
  install_bin "$dir/out/kwok" "$kwok_bin"
  say "built kwok ($(size_of "$kwok_bin")) in $(elapsed "$t")"
}

locked_build_kwok() {
  [ -x "$kwok_bin" ] && return 0
  find_go && build_kwok
}

ensure_kwok() {
  if [ -x "$kwok_bin" ]; then
    say "kwok: v$KWOK_VERSION cached ($kwok_bin)"
    return 0
  fi
  if with_lock kwok locked_build_kwok; then return 0; fi
  missing+=("kwok v$KWOK_VERSION (the scale benchmark's simulated nodes): the build failed (see above)")
}
