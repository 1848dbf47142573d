# Sourced by ./sandbox: makes sure the project's Node (>= 22, from the pinned `node` devDependency) and its
# packages are installed. Idempotent: it runs `npm ci` only when node_modules is missing or older than the lock.

sandbox_die() {
  printf '%s\n' "$*" >&2
  exit 3
}

sandbox_ensure_node() {
  local root="$1"
  # The lock file's hash, recorded after a successful install: a changed lock reinstalls, nothing else does.
  local stamp="$root/node_modules/.sandbox-lock-hash" want
  # Answered by bash's own tests when the stamp is newer than the lock (a checkout writes a changed lock anew).
  if [ -x "$root/node_modules/.bin/node" ] && [ -f "$stamp" ] && [ "$stamp" -nt "$root/package-lock.json" ] &&
    [ "$root/node_modules/.sandbox-node-checked" -nt "$root/node_modules/.bin/node" ]; then
    return 0
  fi
  want="$(sha256sum "$root/package-lock.json" | cut -d' ' -f1)"
  if [ ! -x "$root/node_modules/.bin/node" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    command -v npm >/dev/null 2>&1 || sandbox_die "sandbox: npm was not found. Install Node.js and npm (any version from 18; e.g. 'apt-get install -y nodejs npm'), then run this again. The project brings its own Node 24."
    printf 'sandbox: installing the project'"'"'s packages and Node 24 (npm ci)...\n' >&2
    (cd "$root" && npm ci --no-audit --no-fund --loglevel=error) >&2 \
      || sandbox_die "sandbox: 'npm ci' failed (see above). The npm registry must be reachable."
  fi
  # Written after every check that passed, so that the tests above answer next time.
  printf '%s\n' "$want" >"$stamp"
  # The version, asked once per Node binary (its size and time are recorded), not on every call: that costs a start.
  local checked="$root/node_modules/.sandbox-node-checked" mark major
  mark="$(stat -L -c '%s %Y' "$root/node_modules/.bin/node" 2>/dev/null || echo missing)"
  if [ "$(cat "$checked" 2>/dev/null)" = "$mark" ]; then
    # Written again, so that the tests above answer next time.
    printf '%s\n' "$mark" >"$checked"
    return 0
  fi
  major="$("$root/node_modules/.bin/node" -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)"
  [ "$major" -ge 22 ] 2>/dev/null \
    || sandbox_die "sandbox: node_modules/.bin/node is Node $major; the project needs Node 22 or later. Remove node_modules and run this again."
  printf '%s\n' "$mark" >"$checked"
}
