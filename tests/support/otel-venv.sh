#!/usr/bin/env bash
# Project-local Python venvs for the OTLP tests (tests/otlp_*.rs):
#   otel-venv.sh proto    -> target/otel-venv/proto   (opentelemetry-proto + protobuf: strict OTLP/JSON parsing)
#   otel-venv.sh phoenix  -> target/otel-venv/phoenix (arize-phoenix: a real OTLP/HTTP receiver)
# Prints the venv's python on success. Idempotent: a marker is written once the imports work,
# and later calls just print the path. Exits 1 with a message when the install fails.
set -euo pipefail
what=${1:?usage: otel-venv.sh proto|phoenix}
root=$(cd "$(dirname "$0")/../.." && pwd)
dir=${OTEL_VENV_ROOT:-$root/target/otel-venv}/$what
case $what in
  proto) pkgs=(opentelemetry-proto protobuf); probe='import opentelemetry.proto.collector.trace.v1.trace_service_pb2, google.protobuf.json_format' ;;
  phoenix) pkgs=(arize-phoenix); probe='import phoenix.server.main' ;;
  *) echo "otel-venv.sh: unknown venv $what" >&2; exit 2 ;;
esac
py=$dir/bin/python
mkdir -p "$(dirname "$dir")"
# Test modules run side by side and may ask for the same venv at once: one installs, the others
# wait for it (flock is util-linux; without it, installs are not serialized).
if command -v flock >/dev/null 2>&1; then
  exec 9>"$dir.lock"
  flock 9
fi
if [[ -f $dir/.installed-ok ]]; then echo "$py"; exit 0; fi
log=$dir.log
{
  python3 -m venv "$dir" &&
    "$py" -m pip install --disable-pip-version-check --no-input -q "${pkgs[@]}" &&
    "$py" -c "$probe"
} >"$log" 2>&1 || { echo "otel-venv.sh: installing ${pkgs[*]} into $dir failed (see $log)" >&2; exit 1; }
touch "$dir/.installed-ok"
echo "$py"
