"""`tf.keras.utils.get_file`: fetch a data file once, then read it from a local cache.

TF1 tutorials load their data through it (the premade-estimator tutorial's
`get_file("iris_training.csv", URL)`): the file is looked up in
`<cache_dir>/<cache_subdir>/<fname>` (default `~/.keras/datasets`, or
`/tmp/.keras/datasets` when `~/.keras` is not writable) and downloaded only when it is
missing or its hash does not match, so a program runs offline once the file is there.
A download goes to a temporary file in the same folder and is renamed into place once
complete, so an interrupted one never leaves a partial file under the cached name.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tarfile
import urllib.error
import urllib.request
import zipfile

from tensorflux._src.train.atomic_write import write_with

_ARCHIVE_FORMATS = ("tar", "zip")


def get_file(fname, origin, untar=False, md5_hash=None, file_hash=None,
             cache_subdir="datasets", hash_algorithm="auto", extract=False,
             archive_format="auto", cache_dir=None):
    """The path of `fname` in the cache, downloading it from `origin` if needed (TF 1.15's
    signature and rules). `untar` / `extract` unpack an archive next to it."""
    if cache_dir is None:
        cache_dir = os.path.join(os.path.expanduser("~"), ".keras")
    if md5_hash is not None and file_hash is None:
        file_hash, hash_algorithm = md5_hash, "md5"
    datadir_base = os.path.expanduser(cache_dir)
    # TF's Keras creates ~/.keras when imported; the fallback is for read-only homes.
    try:
        os.makedirs(datadir_base, exist_ok=True)
    except OSError:
        pass
    if not os.access(datadir_base, os.W_OK):
        datadir_base = os.path.join("/tmp", ".keras")
    datadir = os.path.join(datadir_base, cache_subdir)
    os.makedirs(datadir, exist_ok=True)

    if untar:
        untar_fpath = os.path.join(datadir, fname)
        fpath = untar_fpath + ".tar.gz"
    else:
        fpath = os.path.join(datadir, fname)

    download = not os.path.exists(fpath)
    if not download and file_hash is not None and not validate_file(
            fpath, file_hash, algorithm=hash_algorithm):
        print(f"A local file was found, but it seems to be incomplete or outdated because "
              f"the {_algorithm_for(file_hash, hash_algorithm)} file hash does not match "
              f"the original value of {file_hash} so we will re-download the data.")
        download = True
    if download:
        print("Downloading data from", origin)
        fetch_atomically(origin, fpath)
        if file_hash is not None and not validate_file(fpath, file_hash,
                                                       algorithm=hash_algorithm):
            os.remove(fpath)
            raise ValueError(f"get_file: the file downloaded from {origin} does not match "
                             f"file_hash={file_hash!r}; it was removed. Check the URL and "
                             f"the hash.")
    if untar:
        if not os.path.exists(untar_fpath):
            _extract_archive(fpath, datadir, archive_format="tar")
        return untar_fpath
    if extract:
        _extract_archive(fpath, datadir, archive_format)
    return fpath


def fetch_atomically(origin, fpath):
    """Fetches `origin` into `fpath` atomically (a temp file renamed into place)."""
    error_msg = "URL fetch failure on {}: {} -- {}"

    def fetch(tmp_path):
        try:
            urllib.request.urlretrieve(origin, tmp_path)
        except urllib.error.HTTPError as e:
            raise Exception(error_msg.format(origin, e.code, e.msg)) from e
        except urllib.error.URLError as e:
            raise Exception(error_msg.format(origin, e.errno, e.reason)) from e
    write_with(fpath, fetch)


def _algorithm_for(file_hash, algorithm):
    if algorithm == "auto":
        return "sha256" if len(file_hash) == 64 else "md5"
    if algorithm not in ("sha256", "md5"):
        raise ValueError(f"hash_algorithm must be 'auto', 'sha256' or 'md5'; received "
                         f"{algorithm!r}")
    return algorithm


def hash_file(fpath, algorithm="sha256", chunk_size=65535):
    """The hex digest of the file at `fpath` ('sha256', 'md5', or 'auto' = sha256)."""
    hasher = hashlib.md5() if algorithm == "md5" else hashlib.sha256()
    with open(fpath, "rb") as f:
        for chunk in iter(lambda: f.read(chunk_size), b""):
            hasher.update(chunk)
    return hasher.hexdigest()


def validate_file(fpath, file_hash, algorithm="auto", chunk_size=65535):
    """Whether the file at `fpath` has the hex digest `file_hash`."""
    algorithm = _algorithm_for(str(file_hash), algorithm)
    return hash_file(fpath, algorithm, chunk_size) == str(file_hash)


def _extract_archive(file_path, path=".", archive_format="auto"):
    """Unpacks a tar or zip archive into `path`; True when one of the formats matched.
    A failed extraction removes what it wrote."""
    if archive_format is None:
        return False
    if archive_format == "auto":
        archive_format = list(_ARCHIVE_FORMATS)
    if isinstance(archive_format, str):
        archive_format = [archive_format]
    for kind in archive_format:
        if kind == "tar":
            is_match, open_archive = tarfile.is_tarfile, tarfile.open
        elif kind == "zip":
            is_match, open_archive = zipfile.is_zipfile, zipfile.ZipFile
        else:
            raise ValueError(f"archive_format must be 'auto', 'tar', 'zip', None or a "
                             f"list of those; received {kind!r}")
        if is_match(file_path):
            with open_archive(file_path) as archive:
                names = archive.getnames() if kind == "tar" else archive.namelist()
                try:
                    if kind == "tar":
                        archive.extractall(path, filter="data")
                    else:
                        archive.extractall(path)
                except BaseException:
                    _remove_extracted(path, names)
                    raise
            return True
    return False


def _remove_extracted(path, names):
    for name in names:
        target = os.path.join(path, name.split("/")[0])
        if os.path.isfile(target):
            os.remove(target)
        elif os.path.isdir(target):
            shutil.rmtree(target, ignore_errors=True)
