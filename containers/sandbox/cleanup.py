"""After every program, the trusted cleanup (inside the image only): every process of the
program's user killed, its SysV IPC objects removed (found by creator as well as owner), the job
folder and the scratch folders emptied however deep, and every writable mount checked for
anything the program's user still owns; what could not be undone is reported as a breach."""

import os
import stat
import time

from program_user import PROGRAM_UID, as_program_user, kill_program_user

SCRATCH = ("/tmp", "/dev/shm", "/dev/mqueue")  # world-writable places, emptied after every program
NOT_STATE = {"proc", "sysfs", "cgroup", "cgroup2", "devpts", "securityfs", "debugfs"}


IPC_TABLES = {"shm": "shmctl", "msg": "msgctl", "sem": "semctl"}
IPC_ID_COLUMNS = {"shm": "shmid", "msg": "msqid", "sem": "semid"}


def ipc_objects() -> dict:
    """{kind: [(id, owner uid)]} of the SysV IPC objects the program made, from /proc/sysvipc.
    Found by creator as well as owner: IPC_SET lets the program hand an object to another
    owner (root, say), but the creator uid (cuid) stays its own."""
    found = {}
    for kind in IPC_TABLES:
        try:
            with open(f"/proc/sysvipc/{kind}") as fh:
                header = fh.readline().split()
                cols = [header.index(name) for name in (IPC_ID_COLUMNS[kind], "uid", "cuid")]
                rows = [[int(r.split()[c]) for c in cols] for r in fh if r.strip()]
        except (OSError, ValueError):
            rows = []
        objects = [(ident, uid) for ident, uid, cuid in rows if PROGRAM_UID in (uid, cuid)]
        if objects:
            found[kind] = objects
    return found


def _remove_ipc():
    """As the program's user: the creator may remove an object whoever owns it now."""
    import ctypes  # rarely needed: imported here to keep every program's start-up short

    libc = ctypes.CDLL(None, use_errno=True)
    for kind, objects in ipc_objects().items():
        for ident, _ in objects:
            if kind == "sem":
                libc.semctl(ident, 0, 0)  # IPC_RMID
            else:
                getattr(libc, IPC_TABLES[kind])(ident, 0, None)


def clean_ipc() -> list[str]:
    """Remove the program's SysV IPC objects. Leaving one is ordinary and not a breach; handing
    one to another owner is an attempt to outlive the cleanup, and is (the container goes)."""
    left = ipc_objects()
    if not left:
        return []
    breaches = []
    handed = {kind: sum(uid != PROGRAM_UID for _, uid in objects) for kind, objects in left.items()}
    if any(handed.values()):
        counts = ", ".join(f"{kind} {n}" for kind, n in handed.items() if n)
        breaches.append(f"SysV IPC objects handed to another owner ({counts}): removed, container recycled")
    as_program_user(_remove_ipc)
    if ipc_objects():
        breaches.append("SysV IPC objects could not be removed")
    return breaches


DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW


class Enough(Exception):
    """Stops a walk early."""


def _enter(parent_fd, name, device):
    """Open the folder `name` under parent_fd (not a link, not another mount); None if it cannot
    be. A folder the program locked (mode 0) is opened all the same: the runner owns the box."""
    for attempt in (1, 2):
        try:
            fd = os.open(name, DIR_FLAGS, dir_fd=parent_fd)
            break
        except PermissionError:
            if attempt == 2:
                return None
            try:
                os.chmod(name, 0o700, dir_fd=parent_fd)
            except OSError:
                return None
        except OSError:
            return None
    if device is not None and os.fstat(fd).st_dev != device:
        os.close(fd)
        return None
    return fd


def walk_tree(path, visit=None, leave=None, same_device=True):
    """Every entry under the folder `path`, depth first, with no recursion and no long paths, so
    a tree of any depth (a program can leave one 100,000 levels deep) is walked in full: one
    folder open at a time, a stack of the names still to enter, climbing back with "..".
    visit(dir_fd, entry, names) for each entry (names: the folders from `path` down to it);
    leave(dir_fd, name) once a folder's contents are done, with its parent open. A visit may
    raise Enough to stop."""
    try:
        fd = os.open(path, DIR_FLAGS)
    except OSError:
        return
    device = os.fstat(fd).st_dev if same_device else None

    def entries(dir_fd, names):
        subfolders = []
        try:
            listed = list(os.scandir(dir_fd))
        except OSError:
            return subfolders
        for entry in listed:
            if visit is not None:
                visit(dir_fd, entry, names)
            try:
                if entry.is_dir(follow_symlinks=False):
                    subfolders.append(entry.name)
            except OSError:
                pass
        return subfolders

    names, stack = [], [entries(fd, [])]
    try:
        while stack:
            if stack[-1]:
                name = stack[-1].pop()
                child = _enter(fd, name, device)
                if child is None:
                    continue
                os.close(fd)
                fd = child
                names.append(name)
                stack.append(entries(fd, names))
                continue
            stack.pop()
            if not names:
                break
            parent = os.open("..", DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = parent
            name = names.pop()
            if leave is not None:
                leave(fd, name)
    finally:
        os.close(fd)


def _retry_writable(fn, dir_fd):
    """fn(); once more after making the folder writable if the program had locked it."""
    try:
        fn()
    except PermissionError:
        try:
            os.chmod(dir_fd, 0o700)
            fn()
        except OSError:
            pass
    except OSError:
        pass  # left behind: the state check reports it


def _unlink_file(dir_fd, entry, _names):
    try:
        is_dir = entry.is_dir(follow_symlinks=False)
    except OSError:
        is_dir = False
    if not is_dir:
        _retry_writable(lambda: os.unlink(entry.name, dir_fd=dir_fd), dir_fd)


def _remove_folder(dir_fd, name):
    _retry_writable(lambda: os.rmdir(name, dir_fd=dir_fd), dir_fd)


def empty_folder(path: str) -> None:
    """Remove everything under `path` (kept itself), however deep: iterative, never recursive
    (shutil.rmtree and os.walk recurse on the image's Python and hit RecursionError on a tree
    1,000 levels deep)."""
    walk_tree(path, _unlink_file, _remove_folder)


def remove_tree(path: str) -> None:
    empty_folder(path)
    try:
        os.rmdir(path)
    except FileNotFoundError:
        pass
    except OSError:
        pass  # left behind: the state check reports it


def writable_mounts() -> list[str]:
    points = []
    with open("/proc/self/mounts") as fh:
        for line in fh:
            _, point, fstype, opts = line.split()[:4]
            if fstype not in NOT_STATE and "rw" in opts.split(","):
                points.append(point.replace("\\040", " "))
    return points


def files_of_program_user(limit: int = 5) -> list[str]:
    """Anything the program's user still owns in any writable mount (it cannot chown, so
    everything it made is owned by it). Other mounts are walked on their own (and proc-like
    ones not at all)."""
    found = []
    for point in writable_mounts():
        try:
            top = os.lstat(point)
        except OSError:
            continue
        if top.st_uid == PROGRAM_UID:
            found.append(point)
        if not stat.S_ISDIR(top.st_mode):
            continue

        def visit(dir_fd, entry, names, point=point):
            try:
                owner = entry.stat(follow_symlinks=False).st_uid
            except OSError:
                return
            if owner == PROGRAM_UID:
                path = os.path.join(point, *names, entry.name)
                found.append(path if len(path) <= 200 else path[:120] + f"... ({len(names)} levels deep)")
                if len(found) >= limit:
                    raise Enough

        try:
            walk_tree(point, visit)
        except Enough:
            return found
    return found


def memory_left(mounts, wait_s: float = 2.0) -> dict:
    """{mount: MB} of the counted tmpfs mounts that still hold data once the program's processes
    and files are gone. A memfd or file in flight in a socket that the program closed is freed a
    moment later, by the kernel's garbage collector of such sockets: waited for up to wait_s."""
    end = time.monotonic() + wait_s
    while True:
        left = {}
        for mount in mounts:
            try:
                st = os.statvfs(mount)
            except OSError:
                continue
            if st.f_blocks != st.f_bfree:
                left[mount] = round((st.f_blocks - st.f_bfree) * st.f_frsize / (1 << 20), 1)
        if not left or time.monotonic() > end:
            return left
        time.sleep(0.01)


def clean_up(folder: str, counted_mounts=()) -> list[str]:
    """Leave the container as the program found it; return what could not be undone."""
    breaches = []
    left = kill_program_user()
    if left:
        breaches.append(f"{len(left)} process(es) of the program survived SIGKILL")
    remove_tree(folder)
    for path in SCRATCH:
        empty_folder(path)
    breaches += clean_ipc()
    owned = files_of_program_user()
    if owned:
        breaches.append("files of the program survived cleanup: " + ", ".join(owned))
    held = memory_left(counted_mounts)
    if held:
        breaches.append("memory of the program survived cleanup: " + ", ".join(f"{m} {mb} MB" for m, mb in held.items()))
    return breaches
