# shellcheck shell=bash
# with_lock NAME CMD...: runs CMD holding <cache>/locks/NAME.lock (the caller sets $cache and say()). One lock per
# tool, image and engine start, never one for everything: two set-ups never build the same thing at once, and a
# set-up whose tools are cached never waits (the fast paths take no lock at all). CMD re-checks the cache once it
# has the lock: the set-up it waited for may have built the thing.
with_lock() {
  local name="$1" fd rc=0
  shift
  if ! command -v flock >/dev/null 2>&1; then
    "$@"
    return
  fi
  mkdir -p "$cache/locks"
  exec {fd}>"$cache/locks/$name.lock"
  if ! flock -n "$fd"; then
    say "another set-up is building $name; waiting for it (nothing else is held up)..."
    flock "$fd"
  fi
  "$@" || rc=$?
  exec {fd}>&-
  return "$rc"
}
