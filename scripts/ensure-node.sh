#!/usr/bin/env bash
# The project's Node LTS, the exact version in .node-version, first on PATH. Source it (.ci/run does)
# to run npm and everything after on it; run as a script, it prints the bin directory instead.
# Fetched once per user from the npm registry's node-<os>-<cpu> package (the official binaries, node
# alone) into ~/.cache/credit-facilitator/node-<version>, checked against the integrity npm reports.
# The machine's npm then runs on it: npm is a script started by the `node` found on PATH.
_ensure_node() {
  local root version os cpu pkg cache dir work tgz want got
  root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
  version="$(tr -d ' \n\r' < "$root/.node-version")"
  case "$(uname -s)" in Linux) os=linux ;; Darwin) os=darwin ;; *) echo "ensure-node: no Node package for $(uname -s)" >&2; return 1 ;; esac
  case "$(uname -m)" in x86_64 | amd64) cpu=x64 ;; aarch64 | arm64) cpu=arm64 ;; *) echo "ensure-node: no Node package for $(uname -m)" >&2; return 1 ;; esac
  pkg="node-$os-$cpu@$version"
  cache="${XDG_CACHE_HOME:-$HOME/.cache}/credit-facilitator"
  dir="$cache/node-$version"
  if [[ ! -x "$dir/bin/node" ]]; then
    command -v npm >/dev/null || { echo "ensure-node: npm is needed to fetch $pkg" >&2; return 1; }
    echo "ensure-node: fetching $pkg from the npm registry (once per user)..." >&2
    mkdir -p "$cache"
    work="$(mktemp -d "$cache/.node-$version-XXXXXX")"
    want="$(npm view "$pkg" dist.integrity)" &&
      tgz="$(cd "$work" && npm pack --silent "$pkg")" &&
      got="sha512-$(node -e 'process.stdout.write(require("node:crypto").createHash("sha512").update(require("node:fs").readFileSync(process.argv[1])).digest("base64"))' "$work/$tgz")" || { rm -rf "$work"; return 1; }
    if [[ -z "$want" || "$got" != "$want" ]]; then
      echo "ensure-node: $pkg integrity mismatch (registry says ${want:-nothing}, the tarball is $got)" >&2
      rm -rf "$work"
      return 1
    fi
    tar -xzf "$work/$tgz" -C "$work" || { rm -rf "$work"; return 1; }
    # A concurrent run may have won the rename; its copy is the same version, checked the same way.
    mv -T "$work/package" "$dir" 2>/dev/null || [[ -x "$dir/bin/node" ]] || { rm -rf "$work"; return 1; }
    rm -rf "$work"
  fi
  [[ "$("$dir/bin/node" --version)" == "v$version" ]] || { echo "ensure-node: $dir/bin/node is not v$version" >&2; return 1; }
  _ENSURE_NODE_BIN="$dir/bin"
}

if [[ "${BASH_SOURCE[0]}" != "$0" ]]; then
  _ensure_node || return 1
  case ":$PATH:" in *":$_ENSURE_NODE_BIN:"*) ;; *) export PATH="$_ENSURE_NODE_BIN:$PATH" ;; esac
  unset -f _ensure_node
  unset _ENSURE_NODE_BIN
else
  _ensure_node || exit 1
  echo "$_ENSURE_NODE_BIN"
fi
