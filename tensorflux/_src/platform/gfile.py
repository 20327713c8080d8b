"""`tf.gfile` / `tf.io.gfile`: TF's file API on local files and fsspec URLs.

A path with a scheme (`memory://...`, `gs://bucket/...`, `s3://...`, TF's rule
`[a-zA-Z][0-9a-zA-Z.]*://`) goes through fsspec's filesystem for that scheme (a backend
such as gcsfs or s3fs must be installed by the user); `file://` and plain paths are the
local filesystem, used directly. Failures are TF's error classes with the messages of
TF's POSIX filesystem (`<path>; No such file or directory`, `file already exists`, ...),
mapped from errno as TF maps them.

`FileIO` keeps TF's semantics: files open lazily (a `GFile(path, 'w')` never written to
creates nothing), 'r' returns str and 'rb' bytes, writing goes straight to the path.
`copy` on local files writes a temporary sibling and renames it into place, so an
interrupted copy never leaves a half-written target; `rename` is an atomic rename within
one filesystem and a copy-then-delete across filesystems.
"""

from __future__ import annotations

import errno as _errno
import glob as _glob
import os
import posixpath
import re
import shutil
import stat as _stat
import uuid

from tensorflux._src.framework import errors

__all__ = [
    "FileIO", "GFile", "FastGFile", "Open", "FileStatistics",
    "Copy", "DeleteRecursively", "Exists", "Glob", "IsDirectory", "ListDirectory",
    "MakeDirs", "MkDir", "Remove", "Rename", "Stat", "Walk",
    "copy_v2", "file_exists_v2", "is_directory_v2", "recursive_create_dir_v2",
    "create_dir_v2", "get_matching_files_v2", "list_directory_v2", "walk_v2",
    "rename_v2", "delete_file_v2", "delete_recursively_v2", "stat_v2", "join",
    "get_registered_schemes", "read_file_to_string", "write_string_to_file",
    "atomic_write_string_to_file",
]

_SCHEME = re.compile(r"^([a-zA-Z][0-9a-zA-Z.]*)://")
_filesystems = {}

# TF's errno -> error code table (core/platform/errors.cc: ErrnoToCode), by class.
_ERRNO_CLASS = {}
for _cls, _names in (
        (errors.InvalidArgumentError, "EINVAL ENAMETOOLONG E2BIG EDESTADDRREQ EDOM EFAULT "
                                      "EILSEQ ENOPROTOOPT ENOSTR ENOTSOCK ENOTTY EPROTOTYPE "
                                      "ESPIPE"),
        (errors.DeadlineExceededError, "ETIMEDOUT ETIME"),
        (errors.NotFoundError, "ENODEV ENOENT ENXIO ESRCH"),
        (errors.AlreadyExistsError, "EEXIST EADDRNOTAVAIL EALREADY"),
        (errors.PermissionDeniedError, "EPERM EACCES EROFS"),
        (errors.FailedPreconditionError, "ENOTEMPTY EISCONN ENOTCONN EISDIR ENOTDIR EPIPE "
                                         "EBUSY ECHILD EADDRINUSE EBADF ENOEXEC"),
        (errors.ResourceExhaustedError, "ENOSPC EDQUOT EMFILE EMLINK ENFILE ENOBUFS ENODATA "
                                        "ENOMEM ENOSR EUSERS"),
        (errors.OutOfRangeError, "EFBIG EOVERFLOW ERANGE"),
        (errors.UnimplementedError, "ENOSYS ENOTSUP EAFNOSUPPORT EPFNOSUPPORT "
                                    "EPROTONOSUPPORT ESOCKTNOSUPPORT EXDEV"),
        (errors.UnavailableError, "EAGAIN ECONNREFUSED ECONNABORTED ECONNRESET EINTR "
                                  "EHOSTDOWN EHOSTUNREACH ENETDOWN ENETRESET ENETUNREACH "
                                  "ENOLCK ENOLINK ENONET"),
        (errors.AbortedError, "EDEADLK ESTALE"),
        (errors.CancelledError, "ECANCELED")):
    for _name in _names.split():
        if hasattr(_errno, _name):
            _ERRNO_CLASS[getattr(_errno, _name)] = _cls

_EXCEPTION_ERRNO = {FileNotFoundError: _errno.ENOENT, FileExistsError: _errno.EEXIST,
                    IsADirectoryError: _errno.EISDIR, NotADirectoryError: _errno.ENOTDIR,
                    PermissionError: _errno.EACCES}


def _io_error(exc, path):
    """TF's IOError(context, errno): `<path>; <strerror>` with errno's error class."""
    if isinstance(exc, errors.OpError):
        return exc
    if isinstance(exc, NotImplementedError):
        return errors.UnimplementedError(None, None, f"{path}; {exc or 'not implemented'}")
    code = getattr(exc, "errno", None)
    if code is None:
        code = next((c for t, c in _EXCEPTION_ERRNO.items() if isinstance(exc, t)), None)
    if code is None:
        return errors.UnknownError(None, None, f"{path}; {exc}")
    cls = _ERRNO_CLASS.get(code, errors.UnknownError)
    return cls(None, None, f"{path}; {os.strerror(code)}")


def _as_str(path):
    path = os.fspath(path)
    return path.decode("utf-8") if isinstance(path, bytes) else path


def _resolve(path):
    """(fsspec filesystem or None for local, path for it, scheme or "")."""
    path = _as_str(path)
    m = _SCHEME.match(path)
    if not m:
        return None, path, ""
    scheme = m.group(1)
    if scheme == "file":
        return None, path[len("file://"):] or "/", ""
    fs = _filesystems.get(scheme)
    if fs is None:
        import fsspec  # only when a URL is used
        try:
            fs = fsspec.filesystem(scheme)
        except (ValueError, ImportError) as e:
            raise errors.UnimplementedError(
                None, None, f"File system scheme '{scheme}' not implemented "
                            f"(file: '{path}')" + (f": {e}" if isinstance(e, ImportError)
                                                   else "")) from None
        _filesystems[scheme] = fs
    return fs, path, scheme


def _unstrip(fs_path, like, scheme):
    """A path fsspec returned, given back the scheme of the user's path `like`."""
    rest = like[len(scheme) + 3:]
    return f"{scheme}://" + (fs_path if rest.startswith("/") else fs_path.lstrip("/"))


class FileStatistics:
    """What `stat` returns: `length` in bytes, `mtime_nsec`, `is_directory`."""

    def __init__(self, length=-1, mtime_nsec=0, is_directory=False):
        self.length = length
        self.mtime_nsec = mtime_nsec
        self.is_directory = is_directory

    def __repr__(self):
        return (f"FileStatistics(length={self.length}, mtime_nsec={self.mtime_nsec}, "
                f"is_directory={self.is_directory})")


class FileIO:
    """A file opened on first use with TF's mode rules; iterates over lines.

    mode: 'r', 'w', 'a', 'r+', 'w+' or 'a+', with 'b' for bytes (str otherwise). Reads
    and writes use separate streams as in TF: writing in 'r+'/'w+' truncates the file
    when the first write happens, 'a'/'a+' append.
    """

    def __init__(self, name, mode):
        self.__name = name
        self.__mode = mode
        self._read_buf = None
        self._writable_file = None
        self._binary_mode = "b" in mode
        mode = mode.replace("b", "")
        if mode not in ("r", "w", "a", "r+", "w+", "a+"):
            raise errors.InvalidArgumentError(
                None, None, "mode is not 'r' or 'w' or 'a' or 'r+' or 'w+' or 'a+'")
        self._read_check_passed = mode in ("r", "r+", "a+", "w+")
        self._write_check_passed = mode in ("a", "w", "r+", "a+", "w+")

    @property
    def name(self):
        """Returns the file name."""
        return self.__name

    @property
    def mode(self):
        """Returns the mode in which the file was opened."""
        return self.__mode

    def _open(self, mode):
        fs, path, _ = _resolve(self.__name)
        try:
            if fs is None:
                return open(path, mode)
            if "r" in mode and fs.isdir(path):
                raise IsADirectoryError(_errno.EISDIR, "Is a directory")
            return fs.open(path, mode)
        except OSError as e:
            raise _io_error(e, _as_str(self.__name)) from None

    def _preread_check(self):
        if not self._read_buf:
            if not self._read_check_passed:
                raise errors.PermissionDeniedError(None, None, "File isn't open for reading")
            self._read_buf = self._open("rb")

    def _prewrite_check(self):
        if not self._writable_file:
            if not self._write_check_passed:
                raise errors.PermissionDeniedError(None, None, "File isn't open for writing")
            self._writable_file = self._open("ab" if "a" in self.__mode else "wb")

    def _prepare_value(self, val):
        return val if self._binary_mode else val.decode("utf-8")

    def size(self):
        """Returns the size of the file."""
        return stat_v2(self.__name).length

    def write(self, file_content):
        """Writes `file_content` (str or bytes) at the end of what was written."""
        self._prewrite_check()
        if isinstance(file_content, str):
            file_content = file_content.encode("utf-8")
        self._writable_file.write(file_content)

    def read(self, n=-1):
        """The next `n` bytes (all of the rest when n == -1): str in text mode."""
        self._preread_check()
        return self._prepare_value(self._read_buf.read(-1 if n is None or n < 0 else n))

    def seek(self, offset=None, whence=0, position=None):
        """Seeks to `offset` from the start (whence 0), current position (1) or end (2)."""
        self._preread_check()
        if offset is None and position is None:
            raise TypeError("seek(): offset argument required")
        if offset is not None and position is not None:
            raise TypeError("seek(): offset and position may not be set simultaneously.")
        if position is not None:
            offset = position
        if whence not in (0, 1, 2):
            raise errors.InvalidArgumentError(
                None, None,
                f"Invalid whence argument: {whence}. Valid values are 0, 1, or 2.")
        self._read_buf.seek(offset, whence)

    def readline(self):
        r"""Reads the next line, keeping \n. At EOF, returns ''."""
        self._preread_check()
        return self._prepare_value(self._read_buf.readline())

    def readlines(self):
        """Returns all lines from the file in a list."""
        self._preread_check()
        lines = []
        while True:
            line = self.readline()
            if not line:
                return lines
            lines.append(line)

    def tell(self):
        """Returns the current position in the file."""
        if self._read_check_passed:
            self._preread_check()
            return self._read_buf.tell()
        self._prewrite_check()
        return self._writable_file.tell()

    def __enter__(self):
        return self

    def __exit__(self, unused_type, unused_value, unused_traceback):
        self.close()

    def __iter__(self):
        return self

    def __next__(self):
        line = self.readline()
        if not line:
            raise StopIteration()
        return line

    def next(self):
        return self.__next__()

    def flush(self):
        """Flushes what was written out of the process (no fsync)."""
        if self._writable_file:
            self._writable_file.flush()

    def close(self):
        """Closes the file; what was written is flushed."""
        if self._read_buf:
            self._read_buf.close()
        self._read_buf = None
        if self._writable_file:
            writable, self._writable_file = self._writable_file, None
            try:
                writable.close()
            except OSError as e:
                raise _io_error(e, _as_str(self.__name)) from None

    def seekable(self):
        """True: FileIO supports seek() and tell()."""
        return True


class GFile(FileIO):
    """`tf.gfile.GFile(name, mode='r')` (also `tf.gfile.Open`, `tf.io.gfile.GFile`)."""

    def __init__(self, name, mode="r"):
        super().__init__(name=name, mode=mode)


class FastGFile(FileIO):
    """`tf.gfile.FastGFile(name, mode='r')`: deprecated in TF1 in favour of GFile."""

    def __init__(self, name, mode="r"):
        super().__init__(name=name, mode=mode)


Open = GFile


def file_exists_v2(path):
    """True if `path` exists, whether a file or a directory."""
    fs, p, _ = _resolve(path)
    return os.path.exists(p) if fs is None else fs.exists(p)


def delete_file_v2(path):
    """Deletes the file at `path` (NotFoundError if it does not exist)."""
    fs, p, _ = _resolve(path)
    try:
        if fs is None:
            os.unlink(p)
        elif not fs.exists(p):
            raise FileNotFoundError(_errno.ENOENT, p)
        elif fs.isdir(p):
            raise IsADirectoryError(_errno.EISDIR, p)
        else:
            fs.rm_file(p)
    except OSError as e:
        raise _io_error(e, _as_str(path)) from None


def read_file_to_string(filename, binary_mode=False):
    """The whole file, as bytes (`binary_mode`) or str."""
    with FileIO(filename, mode="rb" if binary_mode else "r") as f:
        return f.read()


def write_string_to_file(filename, file_content):
    """Writes `file_content` to `filename`, replacing it."""
    with FileIO(filename, mode="w") as f:
        f.write(file_content)


def atomic_write_string_to_file(filename, contents, overwrite=True):
    """Writes a temporary sibling and renames it to `filename`: all or nothing."""
    temp = _as_str(filename) + ".tmp" + uuid.uuid4().hex
    write_string_to_file(temp, contents)
    try:
        rename_v2(temp, filename, overwrite)
    except errors.OpError:
        delete_file_v2(temp)
        raise


def _glob_one(pattern):
    fs, p, scheme = _resolve(pattern)
    if fs is None:
        # TF matches with fnmatch(FNM_PATHNAME): '*' stops at '/', dot files match.
        found = _glob.glob(p, include_hidden=True)
        if pattern != p:  # file:// kept on the results
            found = ["file://" + f for f in found]
        return sorted(found)
    return sorted(_unstrip(f, p, scheme) for f in fs.glob(p))


def get_matching_files_v2(pattern):
    """The paths matching a glob pattern, or any of an iterable of patterns."""
    if isinstance(pattern, (str, bytes, os.PathLike)):
        return _glob_one(pattern)
    return [f for single in pattern for f in _glob_one(single)]


def create_dir_v2(path):
    """Creates the directory `path`; its parent must exist."""
    fs, p, _ = _resolve(path)
    try:
        if fs is None:
            os.mkdir(p)
            return
        if fs.exists(p):
            raise FileExistsError(_errno.EEXIST, p)
        parent = fs._parent(p)
        if parent and parent.strip("/") and not fs.isdir(parent):
            raise FileNotFoundError(_errno.ENOENT, p)
        fs.mkdir(p, create_parents=False)
    except OSError as e:
        raise _io_error(e, _as_str(path)) from None


def recursive_create_dir_v2(path):
    """Creates `path` and any missing parents; fine if it exists as a directory."""
    fs, p, _ = _resolve(path)
    # Like TF: an existing non-directory on the way is FailedPrecondition.
    probe = p.rstrip("/") or p
    while probe and probe not in ("/", "."):
        if (os.path.exists(probe) if fs is None else fs.exists(probe)):
            if not (os.path.isdir(probe) if fs is None else fs.isdir(probe)):
                raise errors.FailedPreconditionError(None, None,
                                                     f"{probe} is not a directory")
            break
        parent = os.path.dirname(probe) if fs is None else fs._parent(probe)
        if parent == probe:
            break
        probe = parent
    try:
        if fs is None:
            os.makedirs(p, exist_ok=True)
        else:
            fs.makedirs(p, exist_ok=True)
    except OSError as e:
        raise _io_error(e, _as_str(path)) from None


def copy_v2(src, dst, overwrite=False):
    """Copies file `src` to `dst`; AlreadyExistsError if `dst` exists and not `overwrite`.

    A local target is written under a temporary name and renamed into place.
    """
    if not overwrite and file_exists_v2(dst):
        raise errors.AlreadyExistsError(None, None, "file already exists")
    sfs, sp, _ = _resolve(src)
    dfs, dp, _ = _resolve(dst)
    if sfs is not None and sfs is dfs:
        try:  # same remote filesystem: its own (server-side) copy
            if not sfs.exists(sp):
                raise FileNotFoundError(_errno.ENOENT, sp)
            if sfs.isdir(sp):
                raise IsADirectoryError(_errno.EISDIR, sp)
            sfs.copy(sp, dp)
            return
        except OSError as e:
            raise _io_error(e, _as_str(src)) from None
    with FileIO(src, "rb") as reader:
        reader._preread_check()
        if dfs is None:
            temp = dp + ".tmp" + uuid.uuid4().hex
            try:
                with open(temp, "wb") as out:
                    shutil.copyfileobj(reader._read_buf, out)
                os.replace(temp, dp)
            except OSError as e:
                if os.path.exists(temp):
                    os.unlink(temp)
                raise _io_error(e, _as_str(dst)) from None
        else:
            with FileIO(dst, "wb") as writer:
                writer._prewrite_check()
                shutil.copyfileobj(reader._read_buf, writer._writable_file)


def rename_v2(src, dst, overwrite=False):
    """Renames (moves) a file or directory; AlreadyExistsError if `dst` exists and not
    `overwrite`."""
    if not overwrite and file_exists_v2(dst):
        raise errors.AlreadyExistsError(None, None, "file already exists")
    sfs, sp, _ = _resolve(src)
    dfs, dp, _ = _resolve(dst)
    try:
        if sfs is None and dfs is None:
            os.replace(sp, dp)
        elif sfs is not None and sfs is dfs:
            if not sfs.exists(sp):
                raise FileNotFoundError(_errno.ENOENT, sp)
            sfs.mv(sp, dp, recursive=sfs.isdir(sp))
        else:
            copy_v2(src, dst, overwrite=True)
            delete_file_v2(src)
    except OSError as e:
        raise _io_error(e, _as_str(src)) from None


def delete_recursively_v2(path):
    """Deletes `path` and everything under it (a file is just deleted)."""
    fs, p, _ = _resolve(path)
    if not (os.path.exists(p) if fs is None else fs.exists(p)):
        raise errors.NotFoundError(None, None, f"{_as_str(path)} not found")
    try:
        if fs is None:
            if os.path.isdir(p) and not os.path.islink(p):
                shutil.rmtree(p)
            else:
                os.unlink(p)
        else:
            fs.rm(p, recursive=True)
    except OSError as e:
        raise _io_error(e, _as_str(path)) from None


def is_directory_v2(path):
    """True if `path` is a directory."""
    try:
        fs, p, _ = _resolve(path)
        return os.path.isdir(p) if fs is None else fs.isdir(p)
    except (errors.OpError, OSError):
        return False


def list_directory_v2(path):
    """The names (not paths) in directory `path`, without '.' and '..'."""
    if not is_directory_v2(path):
        raise errors.NotFoundError(None, None, f"Could not find directory {_as_str(path)}")
    fs, p, _ = _resolve(path)
    try:
        if fs is None:
            return os.listdir(p)
        return [posixpath.basename(e.rstrip("/")) for e in fs.ls(p, detail=False)
                if e.rstrip("/") != fs._strip_protocol(p).rstrip("/")]
    except OSError as e:
        raise _io_error(e, _as_str(path)) from None


def join(path, *paths):
    """Joins path components; URLs keep their scheme (`gs://b/x` + `y` -> `gs://b/x/y`)."""
    path = _as_str(path)
    m = _SCHEME.match(path)
    if m:
        scheme = m.group(0)
        return scheme + posixpath.join(path[len(scheme):], *map(_as_str, paths))
    return os.path.join(path, *map(_as_str, paths))


def _make_full_path(parent, item):
    # os.path.join drops what comes before an absolute item; '/' can start a GCS name.
    if item[0] == "/":
        return "".join([join(parent, ""), item])
    return join(parent, item)


def walk_v2(top, topdown=True, onerror=None):
    """Yields `(dirname, [subdirnames], [filenames])` for `top` and every directory under
    it, parents first (`topdown`) or last; listing errors go to `onerror` or are
    skipped."""
    top = _as_str(top)
    try:
        listing = list_directory_v2(top)
    except errors.NotFoundError as err:
        if onerror:
            onerror(err)
        return
    files, subdirs = [], []
    for item in listing:
        (subdirs if is_directory_v2(_make_full_path(top, item)) else files).append(item)
    here = (top, subdirs, files)
    if topdown:
        yield here
    for subdir in subdirs:
        yield from walk_v2(_make_full_path(top, subdir), topdown, onerror=onerror)
    if not topdown:
        yield here


def stat_v2(path):
    """A `FileStatistics` for `path`."""
    fs, p, _ = _resolve(path)
    try:
        if fs is None:
            st = os.stat(p)
            return FileStatistics(st.st_size, st.st_mtime_ns, _stat.S_ISDIR(st.st_mode))
        info = fs.info(p)
    except OSError as e:
        raise _io_error(e, _as_str(path)) from None
    return FileStatistics(int(info.get("size") or 0), _mtime_nsec(info),
                          info.get("type") == "directory")


def _mtime_nsec(info):
    for key in ("mtime", "LastModified", "updated", "last_modified", "created"):
        value = info.get(key)
        if value is None:
            continue
        if hasattr(value, "timestamp"):
            return int(value.timestamp() * 1e9)
        if isinstance(value, (int, float)):
            return int(value * 1e9)
        try:
            import datetime
            return int(datetime.datetime.fromisoformat(str(value).replace("Z", "+00:00"))
                       .timestamp() * 1e9)
        except ValueError:
            continue
    return 0


def get_registered_schemes():
    """The URL schemes paths may use: "" and "file" (local) and fsspec's protocols (a
    remote one needs its fsspec backend package installed)."""
    import fsspec
    return sorted({"", "file", *fsspec.available_protocols()})


# TF1's tf.gfile names for the same functions, with TF1's argument names.
def Copy(oldpath, newpath, overwrite=False):  # noqa: N802
    """Copies `oldpath` to `newpath` (AlreadyExistsError unless `overwrite`)."""
    copy_v2(oldpath, newpath, overwrite)


def DeleteRecursively(dirname):  # noqa: N802
    """Deletes everything under `dirname` recursively."""
    delete_recursively_v2(dirname)


def Exists(filename):  # noqa: N802
    """True if `filename` exists (file or directory)."""
    return file_exists_v2(filename)


def Glob(filename):  # noqa: N802
    """The files matching the pattern (or patterns) `filename`."""
    return get_matching_files_v2(filename)


def IsDirectory(dirname):  # noqa: N802
    """True if `dirname` is a directory."""
    return is_directory_v2(dirname)


def ListDirectory(dirname):  # noqa: N802
    """The entries of directory `dirname` (NotFoundError if it is not one)."""
    return list_directory_v2(dirname)


def MakeDirs(dirname):  # noqa: N802
    """Creates `dirname` and all missing parents."""
    recursive_create_dir_v2(dirname)


def MkDir(dirname):  # noqa: N802
    """Creates directory `dirname` (its parent must exist)."""
    create_dir_v2(dirname)


def Remove(filename):  # noqa: N802
    """Deletes the file `filename`."""
    delete_file_v2(filename)


def Rename(oldname, newname, overwrite=False):  # noqa: N802
    """Renames or moves a file or directory (AlreadyExistsError unless `overwrite`)."""
    rename_v2(oldname, newname, overwrite)


def Stat(filename):  # noqa: N802
    """A `FileStatistics` (length, mtime_nsec, is_directory) for `filename`."""
    return stat_v2(filename)


def Walk(top, in_order=True):  # noqa: N802
    """`walk_v2(top, topdown=in_order)`."""
    return walk_v2(top, in_order)
