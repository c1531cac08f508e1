"""transpose_file(): the CLI's job from Python. Results against NumPy and
against the CLI's own output (byte for byte) and report, errors against the
CLI's messages, progress, the GIL, and Ctrl-C."""

import json
import os
import re
import signal
import subprocess
import threading
import time

import numpy as np
import pytest
from conftest import pattern, same_bytes

import gtranspose as gt

# The CLI's flags as the Python keywords spell them (errors.cpp).
FLAG_TO_KEYWORD = {"--in-place": "in_place=True", "--resume": "resume=True", "--force": "force=True",
                   "--host-mem": "host_mem", "--device-mem": "device_mem", "--shape": "shape", "--dtype": "dtype",
                   "--engine": "engine", "--kernel": "kernel", "--tile": "tile", "--threads": "threads",
                   "--streams": "streams"}


def cli_run(cli, *args):
    return subprocess.run([cli, *map(str, args)], capture_output=True, text=True)


def cli_message_as_python(stderr):
    """The CLI's one error line, without its "gtranspose: " and with its flags
    spelled as the package's keywords: what the package's exception says."""
    line = stderr.strip().splitlines()[-1]
    assert line.startswith("gtranspose: ")
    line = line[len("gtranspose: "):]
    return re.sub(r"--[a-z-]+", lambda m: FLAG_TO_KEYWORD.get(m.group(0), m.group(0)), line)


def leftovers(folder):
    return sorted(n for n in os.listdir(folder) if ".gt-tmp-" in n or n.endswith(".gtjournal"))


def test_npy_matches_numpy_and_cli(tmp_path, cli):
    a = pattern((301, 177), np.float64)
    np.save(tmp_path / "in.npy", a)
    report = gt.transpose_file(tmp_path / "in.npy", tmp_path / "py.npy", engine="cpu")
    assert same_bytes(np.load(tmp_path / "py.npy"), np.ascontiguousarray(a.T))
    r = cli_run(cli, tmp_path / "in.npy", tmp_path / "cli.npy", "--engine", "cpu", "--json", tmp_path / "cli.json")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "py.npy").read_bytes() == (tmp_path / "cli.npy").read_bytes()
    cli_report = json.loads((tmp_path / "cli.json").read_text())
    assert set(report) == set(cli_report)
    for key in ("schema", "version", "engine", "kernel", "mode", "bytes"):
        assert report[key] == cli_report[key], key
    for side in ("input", "output"):
        for key in ("format", "shape", "dtype", "elem_size", "byte_order", "chunks", "filters"):
            assert report[side][key] == cli_report[side][key], (side, key)
    assert report["schema"] == 1 and report["input"]["format"] == "npy" and report["input"]["dtype"] == "f64"
    assert report["input"]["shape"] == [301, 177] and report["output"]["shape"] == [177, 301]
    assert report["bytes"] == a.nbytes and report["input"]["elem_size"] == 8
    assert report["wall_s"] > 0 and report["rate_bytes_per_s"] > 0 and report["stages"]
    assert report["plan"]["engine"] == "cpu" and report["plan"]["tiles"] >= 1


@pytest.mark.parametrize("dtype,as_given", [("f32", "f32"), (np.float32, "f32"), ("float32", "f32"), ("<f4", "f32"),
                                            ("u8", "u8"), (np.complex128, "c128"), ("bf16", "bf16"),
                                            (np.int16, "i16")])
def test_raw_shapes_and_dtypes(tmp_path, dtype, as_given):
    size = {"f32": 4, "u8": 1, "c128": 16, "bf16": 2, "i16": 2}[as_given]
    a = pattern((123, 45), f"V{size}")
    a.tofile(tmp_path / "in.raw")
    for shape in [(123, 45), "123x45"]:
        gt.transpose_file(str(tmp_path / "in.raw"), str(tmp_path / "out.raw"), shape=shape, dtype=dtype, force=True)
        got = np.fromfile(tmp_path / "out.raw", dtype=a.dtype).reshape(45, 123)
        assert same_bytes(got, np.ascontiguousarray(a.T))


def test_raw_dtype_refusals(tmp_path):
    pattern((4, 4), np.float32).tofile(tmp_path / "in.raw")
    with pytest.raises(gt.GtValueError, match="big-endian"):
        gt.transpose_file(tmp_path / "in.raw", tmp_path / "o.raw", shape=(4, 4), dtype=">f4")
    with pytest.raises(gt.GtValueError, match=r"unknown dtype 'q9': use one of i8 u8"):
        gt.transpose_file(tmp_path / "in.raw", tmp_path / "o.raw", shape=(4, 4), dtype="q9")
    with pytest.raises(gt.GtValueError, match=r"shape takes \(rows, cols\)"):
        gt.transpose_file(tmp_path / "in.raw", tmp_path / "o.raw", shape=(4,), dtype="f32")


def test_hdf5_dataset_paths(tmp_path):
    h5py = pytest.importorskip("h5py", reason="h5py is not installed (apt-get install python3-h5py)")
    a = pattern((90, 61), np.int32)
    with h5py.File(tmp_path / "in.h5", "w") as f:
        f.create_dataset("grp/x", data=a)
        f.create_dataset("other", data=np.zeros((2, 2)))
    report = gt.transpose_file(f"{tmp_path}/in.h5:/grp/x", f"{tmp_path}/out.h5:/xT")
    with h5py.File(tmp_path / "out.h5", "r") as f:
        assert same_bytes(f["xT"][...], np.ascontiguousarray(a.T))
    assert report["input"]["shape"][1] == 61 and report["output"]["dataset"] == "/xT"
    assert report["input"]["dataset"] == "/grp/x" and report["input"]["format"] == "hdf5"
    with pytest.raises(gt.GtOSError, match="no dataset /nope"):
        gt.transpose_file(f"{tmp_path}/in.h5:/nope", tmp_path / "o.h5")


def test_in_place(tmp_path):
    a = pattern((130, 130), np.uint16)
    np.save(tmp_path / "sq.npy", a)
    report = gt.transpose_file(tmp_path / "sq.npy", in_place=True, tile=1024)
    assert report["mode"] == "in-place"
    assert same_bytes(np.load(tmp_path / "sq.npy"), np.ascontiguousarray(a.T))
    assert leftovers(tmp_path) == []


def test_errors_are_the_clis(tmp_path, cli):
    """Each error: its Python class, and the CLI's message with keywords for flags."""
    np.save(tmp_path / "rect.npy", np.zeros((3, 5), np.float32))
    np.save(tmp_path / "frect.npy", np.asfortranarray(np.zeros((3, 5), np.float32)))
    np.save(tmp_path / "exists.npy", np.zeros((1, 1)))
    pattern((4, 4), np.float32).tofile(tmp_path / "in.raw")
    cases = [  # (CLI args, transpose_file call, Python class, also)
        ([tmp_path / "missing.npy", tmp_path / "o.npy"],
         lambda: gt.transpose_file(tmp_path / "missing.npy", tmp_path / "o.npy"), gt.GtFileNotFoundError,
         FileNotFoundError),
        ([tmp_path / "rect.npy", tmp_path / "exists.npy"],
         lambda: gt.transpose_file(tmp_path / "rect.npy", tmp_path / "exists.npy"), gt.GtOSError, OSError),
        ([tmp_path / "in.raw", tmp_path / "o.raw"],
         lambda: gt.transpose_file(tmp_path / "in.raw", tmp_path / "o.raw"), gt.GtValueError, ValueError),
        ([tmp_path / "rect.npy", tmp_path / "o.npy", "--in-place"],
         lambda: gt.transpose_file(tmp_path / "rect.npy", tmp_path / "o.npy", in_place=True), gt.GtValueError,
         ValueError),
        ([tmp_path / "rect.npy", tmp_path / "o.npy", "--resume"],
         lambda: gt.transpose_file(tmp_path / "rect.npy", tmp_path / "o.npy", resume=True), gt.GtValueError,
         ValueError),
        ([tmp_path / "frect.npy", "--in-place"], lambda: gt.transpose_file(tmp_path / "frect.npy", in_place=True),
         gt.GtOSError, OSError),
        ([tmp_path / "rect.npy", tmp_path / "rect.npy"],
         lambda: gt.transpose_file(tmp_path / "rect.npy", tmp_path / "rect.npy"), gt.GtValueError, ValueError),
        ([tmp_path / "rect.npy", tmp_path / "nofolder" / "o.npy"],
         lambda: gt.transpose_file(tmp_path / "rect.npy", tmp_path / "nofolder" / "o.npy"), gt.GtFileNotFoundError,
         FileNotFoundError),
        ([tmp_path / "in.raw", tmp_path / "o.raw", "--shape", "5x4", "--dtype", "f32"],
         lambda: gt.transpose_file(tmp_path / "in.raw", tmp_path / "o.raw", shape=(5, 4), dtype="f32"),
         gt.GtOSError, OSError),
    ]
    for args, call, cls, builtin in cases:
        r = cli_run(cli, *args)
        assert r.returncode != 0, args
        with pytest.raises(cls) as info:
            call()
        assert isinstance(info.value, gt.Error) and isinstance(info.value, builtin)
        assert str(info.value) == cli_message_as_python(r.stderr), args
    with pytest.raises(gt.GtFileNotFoundError) as info:
        gt.transpose_file(tmp_path / "missing.npy", tmp_path / "o.npy")
    assert info.value.errno == 2
    assert leftovers(tmp_path) == []


def test_existing_output_and_force(tmp_path):
    a = pattern((8, 3), np.float32)
    np.save(tmp_path / "in.npy", a)
    np.save(tmp_path / "out.npy", np.zeros(1))
    with pytest.raises(gt.GtOSError, match="exists: use force=True to replace it"):
        gt.transpose_file(tmp_path / "in.npy", tmp_path / "out.npy")
    gt.transpose_file(tmp_path / "in.npy", tmp_path / "out.npy", force=True)
    assert same_bytes(np.load(tmp_path / "out.npy"), np.ascontiguousarray(a.T))


def test_option_checks(tmp_path):
    np.save(tmp_path / "in.npy", np.zeros((4, 4)))
    with pytest.raises(gt.GtValueError, match="force takes True or False"):
        gt.transpose_file(tmp_path / "in.npy", tmp_path / "o.npy", force="yes")
    with pytest.raises(gt.GtValueError, match="progress takes a callable"):
        gt.transpose_file(tmp_path / "in.npy", tmp_path / "o.npy", progress=3)
    with pytest.raises(gt.GtValueError, match="unknown engine 'fast'"):
        gt.transpose_file(tmp_path / "in.npy", tmp_path / "o.npy", engine="fast")
    with pytest.raises(gt.GtValueError, match="device_mem: "):
        gt.transpose_file(tmp_path / "in.npy", tmp_path / "o.npy", device_mem="2X")


def big_npy(path, rows=2048, cols=2048):
    a = pattern((rows, cols), np.float64)
    np.save(path, a)
    return a


def test_progress(tmp_path):
    a = big_npy(tmp_path / "in.npy", 1024, 768)
    calls = []
    me = threading.get_ident()

    def progress(done, total):
        calls.append((done, total, threading.get_ident()))

    report = gt.transpose_file(tmp_path / "in.npy", tmp_path / "out.npy", tile=8192, threads=1, progress=progress)
    assert calls, "progress was never called"
    assert all(t == a.nbytes and tid == me for _, t, tid in calls)  # from the calling thread
    dones = [d for d, _, _ in calls]
    assert dones == sorted(dones) and dones[-1] == a.nbytes == report["bytes"]
    assert same_bytes(np.load(tmp_path / "out.npy"), np.ascontiguousarray(a.T))


class Stop(Exception):
    pass


def test_progress_exception_stops_the_run(tmp_path):
    big_npy(tmp_path / "in.npy", 4096, 4096)  # 128 MiB: a 32 MiB one took under 100 ms on the H100 machine

    def progress(done, total):
        raise Stop(f"stopped at {done}")

    with pytest.raises(Stop):
        # The CPU engine, one thread, small tiles: long enough for the first
        # progress poll (100 ms) to come before the end (the GPU finishes
        # first, and a callback raising after the commit cannot undo it).
        gt.transpose_file(tmp_path / "in.npy", tmp_path / "out.npy", tile=4096, threads=1, engine="cpu",
                          progress=progress)
    assert not (tmp_path / "out.npy").exists() and leftovers(tmp_path) == []


def interrupt_when(predicate):
    """Sends this process SIGINT (Ctrl-C) from a helper thread as soon as
    predicate() holds, i.e. once the run is under way in the library."""
    def watch():
        deadline = time.monotonic() + 60
        while not predicate() and time.monotonic() < deadline:
            time.sleep(0.001)
        os.kill(os.getpid(), signal.SIGINT)
    th = threading.Thread(target=watch, daemon=True)
    th.start()
    return th


def test_ctrl_c_leaves_nothing_at_dst(tmp_path):
    big_npy(tmp_path / "in.npy")
    th = interrupt_when(lambda: any(".gt-tmp-" in n for n in os.listdir(tmp_path)))
    with pytest.raises(KeyboardInterrupt):
        gt.transpose_file(tmp_path / "in.npy", tmp_path / "out.npy", tile=1024, threads=1)
    th.join()
    assert not (tmp_path / "out.npy").exists() and leftovers(tmp_path) == []


def test_ctrl_c_in_place_then_resume(tmp_path):
    a = big_npy(tmp_path / "sq.npy")
    journal = tmp_path / "sq.npy.gtjournal"
    th = interrupt_when(journal.exists)
    with pytest.raises(KeyboardInterrupt) as info:
        gt.transpose_file(tmp_path / "sq.npy", in_place=True, tile=1024, threads=1)
    th.join()
    if hasattr(info.value, "__notes__"):  # Python 3.11+: the library's word on what was left
        assert any("resume=True" in n for n in info.value.__notes__), info.value.__notes__
    assert journal.exists()
    with pytest.raises(gt.GtOSError, match="has a journal from an interrupted in-place run .*: rerun with "
                                          ".*resume=True to finish it"):
        gt.transpose_file(tmp_path / "sq.npy", in_place=True)
    gt.transpose_file(tmp_path / "sq.npy", in_place=True, resume=True)
    assert same_bytes(np.load(tmp_path / "sq.npy"), np.ascontiguousarray(a.T))
    assert not journal.exists()


def test_gil_released_while_working(tmp_path):
    big_npy(tmp_path / "in.npy")
    count = 0
    stop = threading.Event()

    def spin():
        nonlocal count
        while not stop.is_set():
            count += 1

    th = threading.Thread(target=spin)
    th.start()
    try:
        time.sleep(0.01)
        before = count
        t0 = time.perf_counter()
        gt.transpose_file(tmp_path / "in.npy", tmp_path / "out.npy", tile=1024, threads=1)
        elapsed = time.perf_counter() - t0
        during = count - before
    finally:
        stop.set()
        th.join()
    # A thread that held the GIL for the whole run would leave the spinner a
    # few switch intervals (5 ms each) at most.
    assert elapsed > 0.05 and during > 1000, (elapsed, during)
