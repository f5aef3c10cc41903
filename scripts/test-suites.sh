#!/usr/bin/env bash
# npm test's suites: unit + integration (.mocharc.json) and the fault suite (.mocharc.faults.json).
# They run side by side: each starts stacks of its own on free ports, and the fault suite spends most
# of its time waiting out the faults it injects (outages, restarts, confirmations), so together they
# take little longer than the longer one. TEST_SEQUENTIAL=1 runs them one after the other.
# Each suite's lines stream with a prefix; the two mocha summaries are repeated at the end, and the
# exit code is non-zero when either suite failed.
set -uo pipefail
cd "$(dirname "$0")/.."
logs=$(mktemp -d "${TMPDIR:-/tmp}/cf-suites-XXXXXX")

run_suite() { # name, mocha args...
  local name=$1
  shift
  npx mocha "$@" > >(tee "$logs/$name.log" | sed -u "s/^/[$name] /") 2>&1
}

# The stack's tools (fetched or built once per user) before either suite, so neither builds them twice.
node dist/tools/stack/prepare-tools.js || exit 1

if [[ "${TEST_SEQUENTIAL:-}" == "1" ]]; then
  run_suite tests; tests=$?
  run_suite faults --config .mocharc.faults.json; faults=$?
else
  run_suite tests & tests_pid=$!
  run_suite faults --config .mocharc.faults.json & faults_pid=$!
  wait "$tests_pid"; tests=$?
  wait "$faults_pid"; faults=$?
fi
sleep 0.2 # the prefixing pipes flush

summary() { echo "$1:"; grep -E '^[[:space:]]+[0-9]+ (passing|failing|pending)' "$logs/$1.log" || echo "  (no mocha summary: see the [$1] lines above)"; }
echo
summary faults
summary tests
rm -rf "$logs"
[[ $tests -eq 0 && $faults -eq 0 ]]
