#!/bin/sh
# Every fixture through two builds, output compared byte for byte: the envelope of each
# fixtures/**/*.ndjson and *.jsonl file (the dialect recognised from its content), and with
# --format pretty. Prints each file whose output differs; exits 1 when one does.
#
#     benches/fixture_diff.sh OLD_BIN NEW_BIN [more boo-normalize options]
set -u
old=$1 new=$2
shift 2
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0 bad=0
for f in $(find "$root/fixtures" -name '*.ndjson' -o -name '*.jsonl' | sort); do
    for fmt in envelope pretty; do
        opts=""
        [ "$fmt" = pretty ] && opts="--format pretty --color never"
        # shellcheck disable=SC2086
        "$old" $opts "$@" "$f" >"$tmp/a" 2>"$tmp/ea"
        ra=$?
        # shellcheck disable=SC2086
        "$new" $opts "$@" "$f" >"$tmp/b" 2>"$tmp/eb"
        rb=$?
        n=$((n + 1))
        if ! cmp -s "$tmp/a" "$tmp/b" || [ $ra != $rb ]; then
            bad=$((bad + 1))
            echo "differs ($fmt, exit $ra/$rb): ${f#"$root"/}"
        fi
    done
done
echo "$n outputs compared, $bad differ"
[ $bad = 0 ]
