#!/usr/bin/env bash
# Run the official MCP conformance suite's client scenarios against orbmcp's conformance client
# (tests/conformance/client.py, run as `python -m tests.conformance.client URL` from the repository root).
#
#   scripts/conformance.sh                 every client scenario, one at a time
#   scripts/conformance.sh SCENARIO...     only these
#   scripts/conformance.sh --install-only  install Node 22 and the suite if missing, then exit
#   scripts/conformance.sh --list          the client scenarios of the installed suite
#   scripts/conformance.sh --expected      the expected failures, "scenario<TAB>reason" per line
#   scripts/conformance.sh --server [SCENARIO...]
#                                          the server scenarios against `orbmcp serve --http --names
#                                          raw` backed by tests/servers/reference.py (through
#                                          tests/serve/conformance.py); one PASS/FAIL line each
#
# Installs Node 22 (the npm `node` package: the suite needs Node >= 22, the system one may be
# older) and the suite into $ORBMCP_CONFORMANCE_CACHE (default .cache/conformance) with npm.
# Each run's results go to a temp dir, removed when nothing failed.
# One line per scenario: PASS, FAIL (unexpected), XFAIL (expected failure) or XPASS (an expected
# failure passed: drop it from the list). A scenario passes only when the suite exits 0 and its
# checks.json holds at least one SUCCESS and no FAILURE or WARNING (the suite reports a client
# that does nothing as passing `initialize`). Scenarios run one at a time: `sse-retry` measures
# reconnect timing and is flaky under parallel load.
#
# ORBMCP_CONFORMANCE_CLIENT replaces the client command (default: <venv python> -m
# tests.conformance.client), e.g. to check that a client doing nothing fails.
#
# Exit status: 0 no unexpected failure; 1 an unexpected failure; 3 Node 22 or the suite could
# not be installed (no npm, no registry); 2 usage.
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE=${ORBMCP_CONFORMANCE_CACHE:-$ROOT/.cache/conformance}
PYTHON=${ORBMCP_PYTHON:-$ROOT/.venv/bin/python}
SUITE_VERSION=0.1.16
NODE_PACKAGE=node@22
TIMEOUT_MS=30000

# The one list of scenarios the suite itself gets wrong: "scenario|signature|reason". The run must
# fail with the signature in the client's first error line, or it counts as an unexpected failure.
EXPECTED_FAILURES=(
  "auth/2025-03-26-oauth-metadata-backcompat|issuer mismatch|suite $SUITE_VERSION bug: the authorization-server metadata it serves at the root well-known location names issuer <origin>/oauth; RFC 8414 section 3.3 requires the issuer to match the URL the metadata was derived from, so a correct client (the mcp SDK's included) must reject it (fixed upstream after 0.1.16)"
)

NODE=$CACHE/node_modules/.bin/node
SUITE=$CACHE/node_modules/@modelcontextprotocol/conformance/dist/index.js

log() { printf '%s\n' "$*" >&2; }

suite_ready() {
  [[ -x $NODE && -f $SUITE ]] || return 1
  local major
  major=$("$NODE" -p 'process.versions.node.split(".")[0]' 2>/dev/null) || return 1
  [[ $major =~ ^[0-9]+$ ]] && ((major >= 22))
}

install_suite() {
  suite_ready && return 0
  if ! command -v npm >/dev/null 2>&1; then
    log "conformance: npm is not installed; cannot install Node 22 and the suite"
    return 3
  fi
  log "conformance: installing $NODE_PACKAGE and @modelcontextprotocol/conformance@$SUITE_VERSION into $CACHE"
  mkdir -p "$CACHE" || return 3
  [[ -f $CACHE/package.json ]] || printf '{"private": true}\n' >"$CACHE/package.json"
  if ! (cd "$CACHE" && npm install --no-audit --no-fund --loglevel=error \
    "$NODE_PACKAGE" "@modelcontextprotocol/conformance@$SUITE_VERSION" >&2); then
    log "conformance: npm install failed (is the npm registry reachable?)"
    return 3
  fi
  suite_ready || { log "conformance: the installed node is not Node 22 or newer"; return 3; }
}

client_scenarios() {
  "$NODE" "$SUITE" list 2>/dev/null | sed -n '/^Client scenarios/,$p' | sed -n 's/^  - \([^ ]*\).*/\1/p'
}

# Prints "signature|reason" for an expected failure.
expected_failure() {
  local entry
  for entry in "${EXPECTED_FAILURES[@]}"; do
    if [[ ${entry%%|*} == "$1" ]]; then
      printf '%s' "${entry#*|}"
      return 0
    fi
  done
  return 1
}

# "pass" or the reason it did not, from the suite's exit status and the saved checks.json.
judge() {
  local rc=$1 dir=$2
  "$PYTHON" - "$rc" "$dir" <<'PY'
import json, pathlib, sys

rc, out = int(sys.argv[1]), pathlib.Path(sys.argv[2])
found = sorted(out.rglob("checks.json"))
if not found:
    print(f"no checks.json (suite exit {rc})")
    raise SystemExit
checks = json.loads(found[-1].read_text())
count = {s: sum(1 for c in checks if c.get("status") == s) for s in ("SUCCESS", "FAILURE", "WARNING")}
bad = [f"{c.get('status')} {c.get('id')}" for c in checks if c.get("status") in ("FAILURE", "WARNING")]
stderr = next(iter(sorted(out.rglob("stderr.txt"))), None)
first_error = ""
if stderr is not None:
    lines = [line for line in stderr.read_text(errors="replace").splitlines() if line.strip()]
    first_error = f"; client: {lines[0][:200]}" if lines else ""
if rc == 0 and count["SUCCESS"] >= 1 and not bad:
    print("pass")
elif not bad and count["SUCCESS"] == 0:
    print(f"no SUCCESS check (suite exit {rc}){first_error}")
else:
    print(f"suite exit {rc}; {', '.join(bad[:4]) or 'no failed check'}{first_error}")
PY
}

main() {
  local only_install=0 list=0 expected=0 server=0
  local -a scenarios=()
  while (($#)); do
    case $1 in
      --install-only) only_install=1 ;;
      --list) list=1 ;;
      --expected) expected=1 ;;
      --server) server=1 ;;
      -h | --help) sed -n '2,28p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; return 0 ;;
      -*) log "conformance: unknown option $1"; return 2 ;;
      *) scenarios+=("$1") ;;
    esac
    shift
  done
  if ((expected)); then
    local entry
    for entry in "${EXPECTED_FAILURES[@]}"; do printf '%s\t%s\n' "${entry%%|*}" "${entry##*|}"; done
    return 0
  fi
  install_suite || return 3
  ((only_install)) && return 0
  if ((list)); then
    client_scenarios
    return 0
  fi
  if ((server)); then
    [[ -x $PYTHON ]] || { log "conformance: no Python at $PYTHON (set ORBMCP_PYTHON)"; return 2; }
    cd "$ROOT" || return 2
    "$PYTHON" -m tests.serve.conformance --node "$NODE" --suite "$SUITE" "${scenarios[@]}"
    return $?
  fi
  if ((${#scenarios[@]} == 0)); then
    mapfile -t scenarios < <(client_scenarios)
    ((${#scenarios[@]})) || { log "conformance: the suite lists no client scenarios"; return 1; }
  fi
  [[ -x $PYTHON ]] || { log "conformance: no Python at $PYTHON (set ORBMCP_PYTHON)"; return 2; }

  # Results (checks.json, the client's stdout/stderr) stay outside the tree; kept on failure.
  local results
  results=$(mktemp -d "${TMPDIR:-/tmp}/orbmcp-conformance.XXXXXX") || return 2
  mkdir -p "$results/agent-dir"
  # The client keeps its OAuth state in a temp dir; anything else (crash logs) stays here too.
  export ORB_AGENT_DIR=$results/agent-dir
  unset ORBMCP_DEBUG
  # The suite splits --command on spaces, so the Python path must not contain any.
  local command=${ORBMCP_CONFORMANCE_CLIENT:-"$PYTHON -m tests.conformance.client"}
  local passed=0 failed=0 xfailed=0 xpassed=0 i=0 sc dir rc verdict xf signature reason
  cd "$ROOT" || return 2
  for sc in "${scenarios[@]}"; do
    i=$((i + 1))
    dir=$results/$(printf '%02d' "$i")-${sc//\//_}
    mkdir -p "$dir"
    "$NODE" "$SUITE" client --command "$command" --scenario "$sc" --timeout "$TIMEOUT_MS" -o "$dir" \
      >"$dir/suite.log" 2>&1
    rc=$?
    verdict=$(judge "$rc" "$dir")
    if xf=$(expected_failure "$sc"); then
      signature=${xf%%|*} reason=${xf#*|}
      if [[ $verdict == pass ]]; then
        xpassed=$((xpassed + 1))
        printf 'XPASS %s (listed as an expected failure: %s)\n' "$sc" "$reason"
      elif [[ $verdict == *"$signature"* ]]; then
        xfailed=$((xfailed + 1))
        printf 'XFAIL %s (%s)\n' "$sc" "$reason"
      else
        failed=$((failed + 1))
        printf 'FAIL %s (expected to fail with "%s", but: %s; see %s)\n' "$sc" "$signature" "$verdict" "$dir"
      fi
    elif [[ $verdict == pass ]]; then
      passed=$((passed + 1))
      printf 'PASS %s\n' "$sc"
    else
      failed=$((failed + 1))
      printf 'FAIL %s (%s; see %s)\n' "$sc" "$verdict" "$dir"
    fi
  done
  printf 'conformance: %d passed, %d failed, %d expected failures, %d unexpected passes\n' \
    "$passed" "$failed" "$xfailed" "$xpassed"
  if ((failed)); then
    log "conformance: results kept in $results"
    return 1
  fi
  rm -rf "$results"
}

main "$@"
