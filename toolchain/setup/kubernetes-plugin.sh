# shellcheck shell=bash
# Sourced by toolchain/setup.sh: the Kubernetes resource plugin, pulumi-resource-kubernetes (`setup.sh
# kubernetes-plugin`). K8S_PLUGIN_VERSION built from the provider module and cached, then installed into the
# project's Pulumi home so that the engine finds it without a download.

k8s_plugin_bin="$(cached_bin_dir "$K8S_PLUGIN_CACHE_FOLDER" "$K8S_PLUGIN_VERSION")/pulumi-resource-kubernetes"

build_kubernetes_plugin() {
  local dir t src
  new_workdir
  t="$(now)"
  say "building pulumi-resource-kubernetes v$K8S_PLUGIN_VERSION from the Go module proxy (several minutes; cached afterwards)..."
  (
    module="github.com/pulumi/pulumi-kubernetes/provider/v4@$K8S_PLUGIN_MODULE_VERSION"
    src="$(module_field "$module" Dir)" || exit 1
    # The module cache is read-only, and generate.go writes next to main.go: build from a writable copy.
    cp -R "$src" "$dir/provider" && chmod -R u+w "$dir/provider" && cd "$dir/provider" || exit 1
    # go.mod points sdk/v4 at ../sdk (a folder of the repository, not in the module): use the published sdk/v4.
    "$go" mod edit -dropreplace github.com/pulumi/pulumi-kubernetes/sdk/v4 \
      -require "github.com/pulumi/pulumi-kubernetes/sdk/v4@$K8S_PLUGIN_SDK_VERSION" || exit 1
    "$go" mod download github.com/pulumi/pulumi-kubernetes/sdk/v4 || exit 1
    # cmd/pulumi-resource-kubernetes embeds schema-embed.json, which its own generate.go writes from schema.json.
    (cd cmd/pulumi-resource-kubernetes && VERSION="$K8S_PLUGIN_VERSION" "$go" run generate.go) || exit 1
    "$go" build -trimpath \
      -ldflags "-s -w -X github.com/pulumi/pulumi-kubernetes/provider/v4/pkg/version.Version=$K8S_PLUGIN_VERSION" \
      -o "$dir/pulumi-resource-kubernetes" ./cmd/pulumi-resource-kubernetes
  ) >&2 || return 1
  install_bin "$dir/pulumi-resource-kubernetes" "$k8s_plugin_bin"
  say "built $k8s_plugin_bin in $(elapsed "$t") ($(size_of "$k8s_plugin_bin"))"
}

# Installs the cached plugin into the project's Pulumi home (as `pulumi plugin install --file` would, without the
# CLI), so the engine finds it for @pulumi/kubernetes $K8S_PLUGIN_VERSION without PATH changes and never downloads.
link_kubernetes_plugin() {
  local home="${PULUMI_HOME:-$root/.sandbox/pulumi-home}"
  local dest="$home/plugins/resource-kubernetes-v$K8S_PLUGIN_VERSION"
  mkdir -p "$dest"
  ln -sfn "$k8s_plugin_bin" "$dest/pulumi-resource-kubernetes"
  rm -f "$dest.partial"
  : >"$dest.lock"
}

locked_build_kubernetes_plugin() {
  [ -x "$k8s_plugin_bin" ] && return 0
  find_go && build_kubernetes_plugin
}

ensure_kubernetes_plugin() {
  if [ -x "$k8s_plugin_bin" ]; then
    say "pulumi-resource-kubernetes: v$K8S_PLUGIN_VERSION cached ($k8s_plugin_bin)"
  elif ! with_lock kubernetes-plugin locked_build_kubernetes_plugin; then
    missing+=("the Pulumi kubernetes resource plugin v$K8S_PLUGIN_VERSION: the build from github.com/pulumi/pulumi-kubernetes/provider/v4@$K8S_PLUGIN_MODULE_VERSION failed (see above)")
    return 0
  fi
  # Per Pulumi home (one per checkout unless PULUMI_HOME says otherwise), not per machine.
  with_lock "pulumi-home-$(printf '%s' "${PULUMI_HOME:-$root/.sandbox/pulumi-home}" | cksum | cut -d' ' -f1)" \
    link_kubernetes_plugin
}
