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
echo "seeded: $(ls corpus/parse_line | wc -l) lines, $(ls corpus/normalize_stream | wc -l) streams"
