"""tf.keras.utils.get_file: the cache under ~/.keras, hashes, archives, failures
(file:// origins, so no network is needed)."""

import hashlib
import io
import os
import tarfile
import zipfile

import pytest

import tensorflux as tf


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir()
    return tmp_path / "home"


def _origin(tmp_path, name, data):
    path = tmp_path / name
    path.write_bytes(data)
    return path, path.as_uri()


def test_downloads_once_into_the_keras_cache(tmp_path, home, capsys):
    source, url = _origin(tmp_path, "iris_training.csv", b"120,4,a,b,c\n")
    path = tf.keras.utils.get_file("iris_training.csv", url)
    assert path == str(home / ".keras" / "datasets" / "iris_training.csv")
    assert open(path, "rb").read() == b"120,4,a,b,c\n"
    assert "Downloading data from " + url in capsys.readouterr().out
    source.write_bytes(b"changed")         # cached: the origin is not read again
    assert tf.keras.utils.get_file("iris_training.csv", url) == path
    assert open(path, "rb").read() == b"120,4,a,b,c\n"
    assert capsys.readouterr().out == ""
    assert [f for f in os.listdir(os.path.dirname(path))] == ["iris_training.csv"]


def test_a_hash_mismatch_downloads_again(tmp_path, home, capsys):
    data = b"fresh data"
    _, url = _origin(tmp_path, "d.bin", data)
    cached = home / "cache" / "sub" / "d.bin"
    cached.parent.mkdir(parents=True)
    cached.write_bytes(b"stale")
    sha256 = hashlib.sha256(data).hexdigest()
    path = tf.keras.utils.get_file("d.bin", url, file_hash=sha256,
                                   cache_dir=str(home / "cache"), cache_subdir="sub")
    assert path == str(cached) and cached.read_bytes() == data
    out = capsys.readouterr().out
    assert "the sha256 file hash does not match the original value of " + sha256 in out
    # md5_hash (the older argument) is checked as md5.
    md5 = hashlib.md5(data).hexdigest()
    assert tf.keras.utils.get_file("d.bin", url, md5_hash=md5, cache_dir=str(home / "cache"),
                                   cache_subdir="sub") == path
    assert "Downloading" not in capsys.readouterr().out
    with pytest.raises(ValueError, match="does not match file_hash"):
        tf.keras.utils.get_file("e.bin", url, file_hash="0" * 64)
    assert not (home / ".keras" / "datasets" / "e.bin").exists()


def test_untar_and_extract(tmp_path, home):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        info = tarfile.TarInfo("flowers/a.txt")
        info.size = 2
        tar.addfile(info, io.BytesIO(b"hi"))
    _, url = _origin(tmp_path, "flowers.tgz", buf.getvalue())
    path = tf.keras.utils.get_file("flowers", url, untar=True)
    assert path == str(home / ".keras" / "datasets" / "flowers")
    assert open(os.path.join(path, "a.txt")).read() == "hi"
    assert os.path.exists(path + ".tar.gz")

    zbuf = io.BytesIO()
    with zipfile.ZipFile(zbuf, "w") as z:
        z.writestr("pack/b.txt", "zip")
    _, url = _origin(tmp_path, "pack.zip", zbuf.getvalue())
    path = tf.keras.utils.get_file("pack.zip", url, extract=True)
    assert open(os.path.join(os.path.dirname(path), "pack", "b.txt")).read() == "zip"
    with pytest.raises(ValueError, match="archive_format"):
        tf.keras.utils.get_file("pack.zip", url, extract=True, archive_format="rar")


def test_a_failed_fetch_names_the_url_and_leaves_no_file(tmp_path, home):
    url = (tmp_path / "missing.csv").as_uri()
    with pytest.raises(Exception, match="URL fetch failure on " + url):
        tf.keras.utils.get_file("missing.csv", url)
    assert os.listdir(home / ".keras" / "datasets") == []
