#!/usr/bin/env bash
# The borrower pages are tested in real headless Chromium (playwright-core drives Debian's build).
# Installs it once when it is missing and we may (root with apt-get); otherwise says what to do.
set -euo pipefail
if [[ -n "${CHROMIUM_PATH:-}" && -x "${CHROMIUM_PATH}" ]]; then exit 0; fi
for candidate in chromium chromium-browser google-chrome; do
  if command -v "$candidate" >/dev/null 2>&1; then exit 0; fi
done
if [[ "$(id -u)" == "0" ]] && command -v apt-get >/dev/null 2>&1; then
  echo "installing Debian chromium for the browser tests (once)..." >&2
  apt-get install -y -q chromium >/dev/null 2>&1 || { apt-get update -q >/dev/null 2>&1 && apt-get install -y -q chromium >/dev/null; }
  exit 0
fi
echo "Chromium is needed for the borrower page tests: install Debian's 'chromium' package, or set CHROMIUM_PATH to a Chromium/Chrome binary." >&2
exit 1
