"""The boo-normalize binary, installed by this wheel into the environment's scripts directory."""

from __future__ import annotations

import os
import sys
import sysconfig

__all__ = ["find_binary"]

_EXE = "boo-normalize" + (sysconfig.get_config_var("EXE") or "")


def find_binary() -> str:
    """Path of the boo-normalize executable this package installed.

    Looks where pip/uv put a wheel's scripts: the running environment's scripts directory,
    then the user scheme's (``pip install --user``). Raises FileNotFoundError naming the
    places it looked.
    """
    candidates = [os.path.join(sysconfig.get_path("scripts"), _EXE)]
    user_scheme = {"nt": "nt_user", "posix": "posix_user"}.get(os.name)
    if sys.platform == "darwin" and getattr(sys, "_framework", None):
        user_scheme = "osx_framework_user"
    if user_scheme and user_scheme in sysconfig.get_scheme_names():
        candidates.append(os.path.join(sysconfig.get_path("scripts", scheme=user_scheme), _EXE))
    # Next to this package's install prefix (e.g. `pip install --target DIR`: DIR/bin).
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    candidates.append(os.path.join(here, "bin", _EXE))
    for path in candidates:
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    raise FileNotFoundError(
        "boo-normalize: the binary is not installed next to this package (looked in "
        + ", ".join(candidates)
        + "); reinstall the wheel"
    )
