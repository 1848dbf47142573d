# shellcheck shell=bash
# Sourced by toolchain/setup.sh: the Pulumi CLI (`setup.sh pulumi`). The one on PATH when it is MIN_PULUMI_VERSION
# or later, else PULUMI_VERSION built from github.com/pulumi/pulumi/pkg/v3 and cached.

pulumi_bin="$(cached_bin_dir "$PULUMI_CACHE_FOLDER" "$PULUMI_VERSION")/pulumi"

pulumi_version_of() { "$1" version 2>/dev/null | head -n1 | tr -d '[:space:]' | sed 's/^v//'; }

build_pulumi() {
  local dir t
  new_workdir
  t="$(now)"
  say "building the Pulumi CLI v$PULUMI_VERSION from the Go module proxy (several minutes; cached afterwards)..."
  (
    cd "$dir" || exit 1
    cat >go.mod <<GOMOD
module sandbox-projects.local/pulumi-build

go $MIN_GO_VERSION

require (
	github.com/pulumi/pulumi/pkg/v3 v$PULUMI_VERSION
	github.com/pulumi/pulumi/sdk/v3 v$PULUMI_VERSION
)

// The one replace of pkg/v3's go.mod that does not point at a local folder.
replace github.com/atotto/clipboard => github.com/tgummerer/clipboard v0.0.0-20241001131231-d02d263e614e
GOMOD
    "$go" get "github.com/pulumi/pulumi/pkg/v3/cmd/pulumi@v$PULUMI_VERSION" || exit 1
    "$go" build -trimpath -tags osusergo,grpcnotrace \
      -ldflags "-s -w -X github.com/pulumi/pulumi/sdk/v3/go/common/version.Version=v$PULUMI_VERSION" \
      -o "$dir/pulumi" github.com/pulumi/pulumi/pkg/v3/cmd/pulumi
  ) >&2 || return 1
  install_bin "$dir/pulumi" "$pulumi_bin"
  say "built $pulumi_bin in $(elapsed "$t") ($(size_of "$pulumi_bin"))"
}

pulumi_cached() { [ -x "$pulumi_bin" ] && [ "$(pulumi_version_of "$pulumi_bin")" = "$PULUMI_VERSION" ]; }

locked_build_pulumi() {
  if pulumi_cached; then
    say "pulumi: v$PULUMI_VERSION built by the set-up this one waited for ($pulumi_bin)"
    return 0
  fi
  find_go && build_pulumi
}

ensure_pulumi() {
  local found v
  found="$(command -v pulumi || true)"
  if [ -n "$found" ] && [ "$found" != "$pulumi_bin" ]; then
    v="$(pulumi_version_of "$found")"
    if [ -n "$v" ] && version_ge "$v" "$MIN_PULUMI_VERSION"; then
      say "pulumi: v$v on PATH ($found)"
      return 0
    fi
    say "pulumi on PATH ($found) is ${v:+v}${v:-not runnable}; the toolkit needs v$MIN_PULUMI_VERSION or later: using the cache"
  fi
  if pulumi_cached; then
    say "pulumi: v$PULUMI_VERSION cached ($pulumi_bin)"
    return 0
  fi
  if with_lock pulumi locked_build_pulumi; then return 0; fi
  missing+=("the Pulumi CLI v$PULUMI_VERSION: the build from github.com/pulumi/pulumi/pkg/v3 failed (see above); install the official CLI (https://www.pulumi.com/docs/install/) or make the Go module proxy reachable")
}
