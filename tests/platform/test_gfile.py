"""tf.gfile / tf.io.gfile on local paths and memory:// URLs, with TF's errors."""

import os
import time
import uuid

import pytest

import tensorflux as tf


@pytest.fixture(params=["local", "memory"])
def root(request, tmp_path):
    if request.param == "local":
        yield str(tmp_path)
        return
    path = f"memory://gfile-test-{uuid.uuid4().hex}"
    tf.io.gfile.makedirs(path)
    yield path
    tf.io.gfile.rmtree(path)


def test_names_are_shared():
    assert tf.gfile.GFile is tf.io.gfile.GFile and tf.gfile.Open is tf.gfile.GFile
    assert tf.gfile.FastGFile is not tf.gfile.GFile
    assert "memory" in tf.io.gfile.get_registered_schemes()
    assert {"", "file"} <= set(tf.io.gfile.get_registered_schemes())
    assert tf.io.gfile.join("gs://bucket/dir", "a", "b.txt") == "gs://bucket/dir/a/b.txt"
    assert tf.io.gfile.join("/x", "y") == os.path.join("/x", "y")


def test_gfile_modes_reading_and_writing(root):
    path = tf.io.gfile.join(root, "f.txt")
    never = tf.io.gfile.join(root, "never.txt")
    with tf.gfile.GFile(never, "w"):
        pass  # TF opens lazily: nothing written, nothing created
    assert not tf.gfile.Exists(never)

    with tf.gfile.GFile(path, "w") as f:
        f.write("héllo\nsecond line\n")
        f.write(b"third\n")
        assert f.tell() == len("héllo\nsecond line\nthird\n".encode()) == 25
    with tf.gfile.GFile(path, "a") as f:
        f.write("fourth")
    with tf.gfile.GFile(path) as f:  # 'r': str
        assert f.size() == 31
        assert f.read(1) == "h" and f.tell() == 1
        f.seek(0)
        assert f.readline() == "héllo\n"
        assert f.readlines() == ["second line\n", "third\n", "fourth"]
        assert f.readline() == ""
        f.seek(-6, 2)
        assert f.read() == "fourth"
        f.seek(offset=2)
        f.seek(1, whence=1)
        assert f.read(3) == "llo"
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"^Invalid whence argument: 3. Valid values are 0, 1, or 2.$"):
            f.seek(0, 3)
        with pytest.raises(tf.errors.PermissionDeniedError, match="^File isn't open for writing$"):
            f.write("x")
    with tf.io.gfile.GFile(path, "rb") as f:  # 'rb': bytes
        data = f.read()
        assert data == "héllo\nsecond line\nthird\nfourth".encode()
    assert list(tf.gfile.GFile(path)) == ["héllo\n", "second line\n", "third\n", "fourth"]
    with tf.gfile.GFile(path, "w") as f:
        with pytest.raises(tf.errors.PermissionDeniedError, match="^File isn't open for reading$"):
            f.read()
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"^mode is not 'r' or 'w' or 'a' or 'r\+' or 'w\+' or 'a\+'$"):
        tf.gfile.GFile(path, "x")
    missing = tf.io.gfile.join(root, "missing.txt")
    with pytest.raises(tf.errors.NotFoundError) as e:
        tf.gfile.GFile(missing).read()
    assert str(e.value) == f"{missing}; No such file or directory"
    assert e.value.error_code == tf.errors.NOT_FOUND


def test_directories_listing_walk_and_glob(root):
    j = tf.io.gfile.join
    tf.gfile.MakeDirs(j(root, "a", "b", "c"))
    tf.gfile.MakeDirs(j(root, "a", "b"))  # already there: fine
    tf.gfile.MkDir(j(root, "a", "d"))
    for name in ("a/x.txt", "a/b/y.txt", "a/b/c/z.csv", "a/.hidden"):
        with tf.gfile.GFile(j(root, *name.split("/")), "w") as f:
            f.write(name)
    assert sorted(tf.gfile.ListDirectory(j(root, "a"))) == [".hidden", "b", "d", "x.txt"]
    assert tf.gfile.IsDirectory(j(root, "a", "b")) and not tf.gfile.IsDirectory(j(root, "a", "x.txt"))
    assert not tf.gfile.IsDirectory(j(root, "nothing"))
    assert tf.gfile.Glob(j(root, "a", "*", "*.txt")) == [j(root, "a", "b", "y.txt")]
    assert tf.gfile.Glob([j(root, "a", "*.txt"), j(root, "a", "b", "c", "*.csv")]) == [
        j(root, "a", "x.txt"), j(root, "a", "b", "c", "z.csv")]
    assert j(root, "a", ".hidden") in tf.io.gfile.glob(j(root, "a", "*"))  # fnmatch: dot files
    assert tf.gfile.Glob(j(root, "none", "*")) == []

    def norm(walk):
        return [(top, sorted(dirs), sorted(files)) for top, dirs, files in walk]

    top_down = [(j(root, "a"), ["b", "d"], [".hidden", "x.txt"]),
                (j(root, "a", "b"), ["c"], ["y.txt"]),
                (j(root, "a", "b", "c"), [], ["z.csv"]), (j(root, "a", "d"), [], [])]
    assert sorted(norm(tf.gfile.Walk(j(root, "a")))) == sorted(top_down)
    walked = norm(tf.io.gfile.walk(j(root, "a"), topdown=False))
    assert walked[-1] == top_down[0] and walked.index(top_down[2]) < walked.index(top_down[1])
    assert list(tf.gfile.Walk(j(root, "nothing"))) == []
    errors_seen = []
    assert list(tf.io.gfile.walk(j(root, "nothing"), onerror=errors_seen.append)) == []
    assert isinstance(errors_seen[0], tf.errors.NotFoundError)

    with pytest.raises(tf.errors.NotFoundError,
                       match=f"^Could not find directory {j(root, 'a', 'x.txt')}$"):
        tf.gfile.ListDirectory(j(root, "a", "x.txt"))
    with pytest.raises(tf.errors.AlreadyExistsError, match="; File exists$"):
        tf.gfile.MkDir(j(root, "a"))
    with pytest.raises(tf.errors.NotFoundError, match="; No such file or directory$"):
        tf.gfile.MkDir(j(root, "q", "r"))
    with pytest.raises(tf.errors.FailedPreconditionError, match="x.txt is not a directory$"):
        tf.gfile.MakeDirs(j(root, "a", "x.txt", "sub"))

    st = tf.gfile.Stat(j(root, "a", "x.txt"))
    assert (st.length, st.is_directory) == (len("a/x.txt"), False)
    assert abs(st.mtime_nsec / 1e9 - time.time()) < 120
    assert tf.io.gfile.stat(j(root, "a", "b")).is_directory
    with pytest.raises(tf.errors.NotFoundError, match="nope; No such file or directory$"):
        tf.gfile.Stat(j(root, "nope"))

    tf.gfile.Remove(j(root, "a", "x.txt"))
    assert not tf.gfile.Exists(j(root, "a", "x.txt"))
    with pytest.raises(tf.errors.NotFoundError, match="x.txt; No such file or directory$"):
        tf.io.gfile.remove(j(root, "a", "x.txt"))
    tf.gfile.DeleteRecursively(j(root, "a"))
    assert not tf.gfile.Exists(j(root, "a"))
    with pytest.raises(tf.errors.NotFoundError, match=f"^{j(root, 'a')} not found$"):
        tf.io.gfile.rmtree(j(root, "a"))


def test_copy_and_rename(root):
    j = tf.io.gfile.join
    src, dst, other = j(root, "src.bin"), j(root, "dst.bin"), j(root, "other.bin")
    with tf.gfile.GFile(src, "wb") as f:
        f.write(b"\x00\x01payload")
    tf.gfile.Copy(src, dst)
    with pytest.raises(tf.errors.AlreadyExistsError, match="^file already exists$"):
        tf.gfile.Copy(src, dst)
    with tf.gfile.GFile(other, "wb") as f:
        f.write(b"other")
    tf.io.gfile.copy(other, dst, overwrite=True)
    assert tf.gfile.GFile(dst, "rb").read() == b"other"
    with pytest.raises(tf.errors.NotFoundError, match="missing; No such file or directory$"):
        tf.gfile.Copy(j(root, "missing"), j(root, "x"))

    with pytest.raises(tf.errors.AlreadyExistsError, match="^file already exists$"):
        tf.gfile.Rename(src, dst)
    tf.gfile.Rename(src, dst, overwrite=True)
    assert not tf.gfile.Exists(src) and tf.gfile.GFile(dst, "rb").read() == b"\x00\x01payload"
    tf.io.gfile.rename(dst, j(root, "moved.bin"))
    with pytest.raises(tf.errors.NotFoundError, match="dst.bin; No such file or directory$"):
        tf.gfile.Rename(dst, j(root, "again.bin"))
    assert sorted(tf.gfile.ListDirectory(root)) == ["moved.bin", "other.bin"]


def test_interrupted_local_copy_leaves_no_partial_target(tmp_path, monkeypatch):
    src, dst = str(tmp_path / "src"), str(tmp_path / "dst")
    with tf.gfile.GFile(src, "w") as f:
        f.write("new contents")
    with tf.gfile.GFile(dst, "w") as f:
        f.write("old contents")

    def broken_copy(reader, writer, *args):
        writer.write(reader.read(3))
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("shutil.copyfileobj", broken_copy)
    with pytest.raises(tf.errors.ResourceExhaustedError, match="; No space left on device$"):
        tf.gfile.Copy(src, dst, overwrite=True)
    assert tf.gfile.GFile(dst).read() == "old contents"
    assert sorted(os.listdir(tmp_path)) == ["dst", "src"]


def test_file_urls_and_unknown_schemes(tmp_path):
    url = "file://" + str(tmp_path / "u.txt")
    with tf.gfile.GFile(url, "w") as f:
        f.write("via url")
    assert tf.gfile.GFile(str(tmp_path / "u.txt")).read() == "via url"
    assert tf.gfile.Glob("file://" + str(tmp_path / "*.txt")) == [url]
    with pytest.raises(tf.errors.UnimplementedError,
                       match=r"^File system scheme 'nosuchfs' not implemented "
                             r"\(file: 'nosuchfs://b/x'\)$"):
        tf.gfile.Exists("nosuchfs://b/x")
