"""A folder of this user's own in a place every user may write (/tmp, /dev/shm)."""

from __future__ import annotations

import os

# On the step client's start-up path (worker_client): only os, no pathlib.


def own_folder(base: str) -> str | None:
    """`base`/wirebench-<uid>, made 0700 if missing; None when it cannot be made, or it is
    someone else's, a symlink or open to others: in a shared folder another user could
    plant it, to read what is put there or to swallow what is sent there."""
    import stat

    folder = os.path.join(base, f"wirebench-{os.getuid()}")
    try:
        os.mkdir(folder, 0o700)
    except FileExistsError:
        pass
    except OSError:
        return None
    try:
        st = os.lstat(folder)
    except OSError:
        return None
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o077:
        return None
    return folder
