#!/usr/bin/env bash
# Build seed corpora for the fuzz targets from the real captures in ../fixtures.
set -euo pipefail
cd "$(dirname "$0")"
for t in read_lines parse_line normalize_stream; do mkdir -p "corpus/$t"; done
i=0
for f in ../fixtures/real/*.ndjson ../fixtures/captured/*/*.ndjson; do
  [ -f "$f" ] || continue
  # Whole small files for the stream targets (first 64 KiB of each).
  head -c 65536 "$f" > "corpus/normalize_stream/$(basename "$f")"
  head -c 65536 "$f" > "corpus/read_lines/$(basename "$f")"
  # Single lines (up to 4 KiB) for the parser target.
  head -n 40 "$f" | while IFS= read -r line; do
    i=$((i + 1))
    printf '%s' "${line:0:4096}" > "corpus/parse_line/$(basename "$f").$i"
  done
done
# Deep nesting around the limit (json::MAX_DEPTH = 1024) and far beyond it, for the parser and
# as a tool input in a stream.
for n in 127 128 998 1024 1025 5000; do
  python3 -c "import sys; n=$n; sys.stdout.write('{\"k\":'*n + '[1,\"]}\\\\\"\"]' + '}'*n)" > "corpus/parse_line/deep-objects-$n"
  python3 -c "import sys; n=$n; sys.stdout.write('['*n + ']'*n)" > "corpus/parse_line/deep-arrays-$n"
  python3 -c "import sys; n=$n-5; sys.stdout.write('{\"type\":\"assistant\",\"message\":{\"id\":\"m\",\"content\":[{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"X\",\"input\":{\"d\":' + '['*n + ']'*n + '}}]}}\\n')" > "corpus/normalize_stream/deep-tool-input-$n"
done
echo "seeded: $(ls corpus/parse_line | wc -l) lines, $(ls corpus/normalize_stream | wc -l) streams"
