#!/bin/sh
# The terraform module's test phase (called by terraform/pom.xml, or by hand from this directory):
# install the pinned HCL parser, validate ../ (the repository's Terraform), run the fixture tests.
set -eu
cd "$(dirname "$0")"
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "terraform-validate: SKIPPED - node/npm not on PATH (install Node.js >= 18 to validate the Terraform)"
  exit 0
fi
npm ci --no-audit --no-fund --loglevel=error
node validate.mjs
node --test test/
