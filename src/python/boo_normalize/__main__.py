"""`python -m boo_normalize ARGS...` runs the installed boo-normalize binary with ARGS."""

from __future__ import annotations

import os
import subprocess
import sys

from boo_normalize import find_binary


def main() -> "int | None":
    try:
        binary = find_binary()
    except FileNotFoundError as err:
        print(err, file=sys.stderr)
        return 127
    if sys.platform == "win32":
        # No exec on Windows: run it as a child and pass its status on.
        try:
            return subprocess.run([binary, *sys.argv[1:]]).returncode
        except KeyboardInterrupt:
            return 130
    # Replace this process so signals, stdin/stdout and the exit status are the binary's own.
    os.execv(binary, [binary, *sys.argv[1:]])
    return None


if __name__ == "__main__":
    sys.exit(main())
