"""Autotune record / replay: key and config formats, the backend guard, and the
tuner overlay driven through a real ``triton.runtime.autotuner.Autotuner``.

Autotuner.run needs a driver only to launch and to benchmark; both are replaced
here (``tuner.fn`` by a recording runner, ``do_bench`` by a fake whose timings
are chosen per config), so the tuner's own key computation, cache protocol and
config choice run for real on a CPU-only machine. FlagGems' LibTuner cannot be
imported without torch; ``LibTunerLike`` reproduces the part of its ``run`` that
matters here (strategy key, persistent cache read before tuning).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from zl_flaggems.common.autotune_records import (
    AutotuneRecorder,
    NotDecodable,
    ReplayBook,
    TunerId,
    config_from_dict,
    config_to_dict,
    decode_value,
    encode_value,
    key_from_json,
    key_to_json,
    read_records,
    replay_problem,
    write_meta,
)

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "packages" / "zl-flaggems" / "src"


def _subprocess_env(**extra: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ZL_")}
    paths = [str(SRC), str(ROOT / "packages" / "zl-core" / "src"), env.get("PYTHONPATH", "")]
    env["PYTHONPATH"] = os.pathsep.join(p for p in paths if p)
    env.update(extra)
    return env


# -- keys -----------------------------------------------------------------------


class _Opaque:
    def __repr__(self) -> str:
        return f"<_Opaque object at {hex(id(self))}>"


class _IntLike:
    def __init__(self, v: int):
        self.v = v

    def __index__(self) -> int:
        return self.v


KEYS = [
    (1024, 4096, "torch.float16", "torch.float16"),
    (0, -3, True, False, None, "bf16"),
    (1.5, 2.0, 1e-30),
    ((1, 2), ("a", (3,))),
    (),
]


@pytest.mark.parametrize("key", KEYS)
def test_key_round_trip(key):
    text = key_to_json(key)
    assert key_from_json(text) == key
    assert key_to_json(key_from_json(text)) == text


def test_key_encoding_keeps_types_apart_and_drops_addresses():
    assert key_to_json((1,)) != key_to_json((True,))
    assert key_to_json((1,)) != key_to_json(("1",))
    assert key_to_json((1,)) != key_to_json((1.0,))
    assert key_to_json((_IntLike(7),)) == key_to_json((7,))
    assert key_to_json((_Opaque(),)) == key_to_json((_Opaque(),))  # repr carries no address
    nan = key_to_json((float("inf"),))
    assert key_from_json(nan) == (float("inf"),)
    with pytest.raises(NotDecodable):
        decode_value(encode_value(_Opaque()))


def test_key_string_is_identical_in_a_fresh_process():
    code = textwrap.dedent("""
        import sys
        from zl_flaggems.common.autotune_records import key_to_json
        keys = [(1024, 4096, "torch.float16", "torch.float16"), (0, -3, True, False, None, "bf16"),
                (1.5, 2.0, 1e-30), ((1, 2), ("a", (3,))), ()]
        sys.stdout.write("\\n".join(key_to_json(k) for k in keys))
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env=_subprocess_env(PYTHONHASHSEED="12345")).stdout
    assert out.splitlines() == [key_to_json(k) for k in KEYS]


# -- configs --------------------------------------------------------------------


def _hook(nargs):
    return None


def test_config_serialises_every_field_and_notes_the_pre_hook():
    triton = pytest.importorskip("triton")
    cfg = triton.Config({"BLOCK_M": 64, "EVEN_K": True}, num_warps=8, num_stages=4, num_ctas=2,
                        maxnreg=128, pre_hook=_hook)
    cfg.custom_field = 7  # what a fork may add
    data = config_to_dict(cfg)
    assert data["kwargs"] == {"BLOCK_M": 64, "EVEN_K": True}
    assert (data["num_warps"], data["num_stages"], data["num_ctas"], data["maxnreg"]) == (8, 4, 2, 128)
    assert data["custom_field"] == 7 and "ir_override" in data
    assert data["pre_hook"] == {"serialisable": False, "name": f"{__name__}._hook"}
    json.dumps(data)  # plain JSON
    back = config_from_dict(json.loads(json.dumps(data)), triton.Config)
    assert back.all_kwargs() == cfg.all_kwargs()
    assert back.custom_field == 7 and back.pre_hook is None


# -- files, meta, backend guard ---------------------------------------------------


def test_recorder_writes_one_file_per_tuner_and_book_reads_it(tmp_path):
    rec = AutotuneRecorder(tmp_path)
    mm = TunerId(kernel="mm_kernel", tuner="flag_gems.ops.mm.mm_kernel", tuner_class="LibTuner")
    sm = TunerId(kernel="softmax_kernel", tuner="flag_gems.ops.softmax.softmax_kernel")
    cfg = {"kwargs": {"BLOCK_M": 64}, "num_warps": 4, "num_stages": 3, "num_ctas": 1, "maxnreg": None,
           "pre_hook": None}
    assert rec.observe(mm, key_to_json((1024, "torch.float16")), cfg)
    assert not rec.observe(mm, key_to_json((1024, "torch.float16")), dict(cfg))  # same pick: no change
    rec.observe(sm, key_to_json((4096,)), cfg)
    files = sorted(p.name for p in tmp_path.glob("*.json"))
    assert files == ["flag_gems.ops.mm.mm_kernel.json", "flag_gems.ops.softmax.softmax_kernel.json"]
    records = read_records(tmp_path)
    assert records["flag_gems.ops.mm.mm_kernel"]["kernel"] == "mm_kernel"
    book = ReplayBook(records)
    assert book.lookup(mm, key_to_json((1024, "torch.float16"))) == cfg
    assert book.lookup(mm, key_to_json((2048, "torch.float16"))) is None
    line = book.report_missing(mm, key_to_json((2048, "torch.float16")))
    assert line == 'AUTOTUNE_REPLAY_FALLBACK kernel=mm_kernel key=[2048,"torch.float16"]'
    assert book.report_missing(mm, key_to_json((2048, "torch.float16"))) is None  # once per (kernel, key)
    assert book.fallbacks == 1
    renamed = TunerId(kernel="softmax_kernel", tuner="flag_gems.ops.softmax_v2.softmax_kernel")
    assert book.lookup(renamed, key_to_json((4096,))) == cfg  # unique kernel name still matches


def test_replay_problem_refuses_other_backend_and_missing_meta(tmp_path):
    assert replay_problem(tmp_path / "nope", "cuda")[0] == "replay_dir"
    assert replay_problem(tmp_path, "cuda")[0] == "replay_backend"  # no meta.json
    write_meta(tmp_path, backend="musa", flaggems_vendor="mthreads", triton_version="3.6.0")
    check, detail = replay_problem(tmp_path, "cuda")
    assert check == "replay_backend" and "backend=musa" in detail and "backend=cuda" in detail
    assert replay_problem(tmp_path, "MUSA") is None
    meta = json.loads((tmp_path / "meta.json").read_text())
    assert meta["backend"] == "musa" and meta["flaggems_vendor"] == "mthreads"
    assert meta["triton_version"] == "3.6.0"


# -- the overlay on a real Autotuner --------------------------------------------


class Runner:
    """Stands in for the JITFunction: records the launch kwargs instead of launching."""

    def __init__(self):
        self.calls: list[dict] = []

    def run(self, *args, **kwargs):
        self.calls.append(kwargs)
        return kwargs


class Bench:
    """Fake do_bench: runs the kernel call once and returns the time set for its BLOCK."""

    def __init__(self, runner: Runner, times: dict[int, float]):
        self.runner, self.times, self.benched = runner, times, []

    def __call__(self, kernel_call, quantiles):
        kernel_call()
        block = self.runner.calls[-1]["BLOCK"]
        self.benched.append(block)
        t = self.times[block]
        return [t, t, t]


class Tensorish:
    def __init__(self, dtype: str = "torch.float16"):
        self.dtype = dtype


def _kernel_module(tmp_path: Path):
    """A real @triton.jit kernel, defined in a file so Triton can read its source."""
    pytest.importorskip("triton")
    path = tmp_path / "zl_at_kernels.py"
    path.write_text(textwrap.dedent("""
        import triton
        import triton.language as tl

        @triton.jit
        def scale_kernel(x, out, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            tl.store(out + offs, tl.load(x + offs, mask=offs < n) * 2, mask=offs < n)
    """))
    import importlib.util

    spec = importlib.util.spec_from_file_location("zl_at_kernels", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def kernels(tmp_path):
    return _kernel_module(tmp_path)


@pytest.fixture
def hub_factory():
    from triton.runtime.autotuner import Autotuner, Config
    from zl_flaggems.cell.plugins.autotune import AutotuneHub

    made = []

    def make(mode, records_dir, book=None, lines=None):
        emit = (lambda line, err=False: lines.append(line)) if lines is not None else None
        hub = AutotuneHub(mode, AutotuneRecorder(records_dir), book, config_cls=Config, emit=emit)
        hub.install(Autotuner)
        made.append(hub)
        return hub

    yield make
    for hub in made:
        hub.uninstall()
    assert "cache" not in Autotuner.__dict__


def _configs(pre_hook=None):
    from triton import Config

    return [Config({"BLOCK": 128}, num_warps=4, pre_hook=pre_hook), Config({"BLOCK": 512}, num_warps=8),
            Config({"BLOCK": 1024}, num_warps=8, num_stages=2)]


def _tuner(kernels, times, configs=None, prune=None):
    from triton.runtime.autotuner import Autotuner

    runner = Runner()
    bench = Bench(runner, times)
    fn = kernels.scale_kernel
    tuner = Autotuner(fn, fn.arg_names, configs or _configs(), ["n"], None, None, do_bench=bench,
                      prune_configs_by=prune)
    tuner.fn = runner
    return tuner, runner, bench


TIMES = {128: 3.0, 512: 1.0, 1024: 2.0}


def test_record_writes_what_each_key_used_including_in_process_cache_hits(tmp_path, kernels, hub_factory):
    hub = hub_factory("record", tmp_path / "rec")
    tuner, runner, bench = _tuner(kernels, TIMES)
    x = Tensorish()
    tuner.run(x, x, 4096, grid=(1,))
    tuner.run(x, x, 4096, grid=(1,))  # served from the tuner's cache: nothing new to record
    tuner.run(x, x, 77, grid=(1,))
    assert bench.benched == [128, 512, 1024, 128, 512, 1024]
    (record,) = read_records(tmp_path / "rec").values()
    assert record["kernel"] == "scale_kernel"
    key = key_to_json((4096, "torch.float16", "torch.float16"))
    assert set(record["entries"]) == {key, key_to_json((77, "torch.float16", "torch.float16"))}
    assert record["entries"][key]["kwargs"] == {"BLOCK": 512}
    assert record["entries"][key]["num_warps"] == 8
    assert runner.calls[-1]["BLOCK"] == 512
    assert hub.stats()["keys_recorded"] == 2


class PersistentCache:
    """FlagGems ConfigCache protocol (``in``, [] get/set) over a dict 'database'."""

    def __init__(self, db: dict):
        self.db, self.reads, self.writes = db, 0, 0

    def __contains__(self, key):
        self.reads += 1
        return key in self.db

    def __getitem__(self, key):
        self.reads += 1
        return self.db[key]

    def __setitem__(self, key, config):
        self.writes += 1
        self.db[key] = config


def _libtuner_like():
    from triton.runtime.autotuner import Autotuner

    class LibTunerLike(Autotuner):
        """The cache protocol of FlagGems' LibTuner.run: strategy key, persistent cache first."""

        def __init__(self, *args, db=None, strategy=None, **kwargs):
            super().__init__(*args, **kwargs)
            self.strategy = strategy or (lambda v: v)
            self.cache = PersistentCache(db if db is not None else {})  # like libcache[table]

        def get_key(self, args):
            key = tuple(self.strategy(args[k]) for k in self.keys if k in args)
            return key + tuple(str(v.dtype) for v in args.values() if hasattr(v, "dtype"))

        def run(self, *args, **kwargs):
            self.nargs = dict(zip(self.arg_names, args, strict=False))
            _args = {k: v for k, v in {**self.nargs, **kwargs}.items() if k in self.arg_names}
            key = self.get_key(_args)
            if key not in self.cache:
                timings = {c: self._bench(*args, config=c, **kwargs) for c in self.prune_configs(kwargs)}
                self.cache[key] = min(timings, key=timings.get)
            config = self.cache[key]
            self.best_config = config
            return self.fn.run(*args, **kwargs, **config.all_kwargs())

    return LibTunerLike


def _align32(v):
    return (v + 31) // 32 * 32


def test_record_includes_a_persistent_cache_hit(tmp_path, kernels, hub_factory):
    from triton import Config

    LibTunerLike = _libtuner_like()
    fn = kernels.scale_kernel
    runner = Runner()
    bench = Bench(runner, TIMES)
    warm = {(4096, "torch.float16", "torch.float16"): Config({"BLOCK": 1024}, num_warps=8, num_stages=2)}
    tuner = LibTunerLike(fn, fn.arg_names, _configs(), ["n"], None, None, do_bench=bench, db=warm,
                         strategy=_align32)
    tuner.fn = runner
    hub_factory("record", tmp_path / "rec")  # installed after construction: existing tuners get wrapped
    x = Tensorish()
    tuner.run(x, x, 4090, grid=(1,))  # align32(4090) = 4096: a hit in the warm persistent cache
    assert bench.benched == []  # nothing was tuned in this process ...
    (record,) = read_records(tmp_path / "rec").values()
    entry = record["entries"][key_to_json((4096, "torch.float16", "torch.float16"))]
    assert entry["kwargs"] == {"BLOCK": 1024} and entry["num_stages"] == 2  # ... and still recorded
    assert record["tuner_class"] == "LibTunerLike"


def _record(tmp_path, kernels, hub_factory, ns=(4096,)):
    from triton.runtime.autotuner import Autotuner

    records = tmp_path / "source"
    hub = hub_factory("record", records)
    tuner, _, _ = _tuner(kernels, TIMES, configs=_configs(pre_hook=_hook))
    for n in ns:
        tuner.run(Tensorish(), Tensorish(), n, grid=(1,))
    hub.uninstall()
    assert "cache" not in Autotuner.__dict__
    return records


def test_replay_injects_without_benchmarking_and_keeps_the_original_config(tmp_path, kernels, hub_factory):
    records = _record(tmp_path, kernels, hub_factory)
    lines: list[str] = []
    hub = hub_factory("replay", tmp_path / "replayed", ReplayBook.load(records), lines)
    # Opposite timings: a tuner that benchmarked would pick BLOCK=128.
    configs = _configs(pre_hook=_hook)
    tuner, runner, bench = _tuner(kernels, {128: 0.1, 512: 9.0, 1024: 9.0}, configs=configs)
    tuner.run(Tensorish(), Tensorish(), 4096, grid=(1,))
    assert bench.benched == []
    assert runner.calls[-1]["BLOCK"] == 512
    assert tuner.best_config is configs[1]
    assert lines == []
    assert hub.stats()["pinned_keys"] == 1
    (used,) = read_records(tmp_path / "replayed").values()  # the replay side's own record
    assert used["entries"][key_to_json((4096, "torch.float16", "torch.float16"))]["kwargs"] == {"BLOCK": 512}


def test_replay_missing_key_prints_marker_once_and_tunes(tmp_path, kernels, hub_factory):
    records = _record(tmp_path, kernels, hub_factory)
    lines: list[str] = []
    hub = hub_factory("replay", tmp_path / "replayed", ReplayBook.load(records), lines)
    tuner, runner, bench = _tuner(kernels, {128: 0.1, 512: 9.0, 1024: 9.0})
    x = Tensorish()
    tuner.run(x, x, 333, grid=(1,))
    tuner.run(x, x, 333, grid=(1,))
    tuner.run(x, x, 4096, grid=(1,))
    assert lines == ['AUTOTUNE_REPLAY_FALLBACK kernel=scale_kernel key=[333,"torch.float16","torch.float16"]']
    assert bench.benched == [128, 512, 1024]  # the missing key was tuned, once
    assert [c["BLOCK"] for c in runner.calls[-3:]] == [128, 128, 512]
    assert hub.stats()["fallback_keys"] == 1


def test_replay_bypasses_the_persistent_cache(tmp_path, kernels, hub_factory):
    from triton import Config

    records = _record(tmp_path, kernels, hub_factory)
    LibTunerLike = _libtuner_like()
    fn = kernels.scale_kernel
    runner = Runner()
    db = {(4096, "torch.float16", "torch.float16"): Config({"BLOCK": 128}, num_warps=4)}  # a stale winner
    lines: list[str] = []
    hub_factory("replay", tmp_path / "replayed", ReplayBook.load(records), lines)
    tuner = LibTunerLike(fn, fn.arg_names, _configs(), ["n"], None, None, do_bench=Bench(runner, TIMES), db=db)
    tuner.fn = runner
    cache = tuner.cache.base
    tuner.run(Tensorish(), Tensorish(), 4096, grid=(1,))
    assert runner.calls[-1]["BLOCK"] == 512  # the record wins over the persistent cache
    assert cache.reads == 0 and cache.writes == 0
    assert lines == []


def test_replay_skips_pruning_and_handles_heuristics_and_single_configs(tmp_path, kernels, hub_factory):
    from triton import Config
    from triton.runtime.autotuner import Autotuner, Heuristics

    records = _record(tmp_path, kernels, hub_factory)
    lines: list[str] = []
    hub_factory("replay", tmp_path / "replayed", ReplayBook.load(records), lines)

    def prune(configs, nargs, **kwargs):
        raise AssertionError("a pinned key must not be pruned or tuned")

    fn = kernels.scale_kernel
    runner = Runner()
    heur = Heuristics(fn, fn.arg_names, {"EXTRA": lambda args: args["n"] % 7})
    tuner = Autotuner(heur, fn.arg_names, _configs(), ["n"], None, None, do_bench=Bench(runner, TIMES),
                      prune_configs_by={"early_config_prune": prune})
    heur.fn = runner
    tuner.run(Tensorish(), Tensorish(), 4096, grid=(1,))
    assert runner.calls[-1]["BLOCK"] == 512 and runner.calls[-1]["EXTRA"] == 4096 % 7
    single_runner = Runner()
    single = Autotuner(fn, fn.arg_names, [Config({"BLOCK": 64})], ["n"], None, None,
                       do_bench=Bench(single_runner, {}))
    single.fn = single_runner
    single.run(Tensorish(), Tensorish(), 999, grid=(1,))  # one config: nothing to pin, nothing to report
    assert single_runner.calls[-1]["BLOCK"] == 64
    assert lines == []


# -- the plugin in a real pytest process ----------------------------------------


CELL_TEST = textwrap.dedent("""
    import triton
    import triton.language as tl
    from triton.runtime.autotuner import Autotuner, Config

    @triton.jit
    def cell_kernel(x, n, BLOCK: tl.constexpr):
        tl.store(x + tl.arange(0, BLOCK), tl.zeros([BLOCK], tl.float32))

    class Runner:
        def __init__(self):
            self.calls = []
        def run(self, *args, **kwargs):
            self.calls.append(kwargs)

    class T:
        dtype = "torch.float32"

    def test_cell():
        runner = Runner()
        benched = []
        def bench(kernel_call, quantiles):
            kernel_call()
            block = runner.calls[-1]["BLOCK"]
            benched.append(block)
            return [{32: 1.0, 64: 0.5}[block]] * 3
        tuner = Autotuner(cell_kernel, cell_kernel.arg_names, [Config({"BLOCK": 32}), Config({"BLOCK": 64})],
                          ["n"], None, None, do_bench=bench)
        tuner.fn = runner
        for n in NS:
            tuner.run(T(), n, grid=(1,))
        print("BENCHED", benched)
""")


def _run_cell(tmp_path: Path, name: str, ns: tuple, **env: str) -> subprocess.CompletedProcess:
    test_dir = tmp_path / f"suite_{name}"
    test_dir.mkdir()
    (test_dir / "test_cell.py").write_text(f"NS = {ns!r}\n" + CELL_TEST)
    cell = tmp_path / name
    cell.mkdir()
    return subprocess.run(
        # default progress output: "test_cell.py " is pending on the line when the marker prints
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "zl_flaggems.cell.plugins.autotune",
         "test_cell.py"],
        cwd=test_dir, capture_output=True, text=True, timeout=300, check=False,
        env=_subprocess_env(ZL_CELL_DIR=str(cell), ZL_BACKEND="cuda", **env))


def test_plugin_record_then_replay_in_fresh_processes(tmp_path):
    pytest.importorskip("triton")
    rec = _run_cell(tmp_path, "a", (100, 200), ZL_AUTOTUNE_MODE="record", GEMS_VENDOR="nvidia")
    assert rec.returncode == 0, rec.stdout + rec.stderr
    records = tmp_path / "a" / "autotune_records"
    meta = json.loads((records / "meta.json").read_text())
    assert meta["backend"] == "cuda" and meta["flaggems_vendor"] == "nvidia" and meta["triton_version"]
    (record,) = read_records(records).values()
    assert len(record["entries"]) == 2
    rep = _run_cell(tmp_path, "b", (100, 200, 300), ZL_AUTOTUNE_MODE="replay", ZL_REPLAY_DIR=str(records))
    assert rep.returncode == 0, rep.stdout + rep.stderr
    markers = [ln for ln in rep.stdout.splitlines() if ln.startswith("AUTOTUNE_REPLAY_FALLBACK")]
    # printed past pytest's capture of a passing test, once, for the one key the record lacks
    assert markers == ['AUTOTUNE_REPLAY_FALLBACK kernel=cell_kernel key=[300,"torch.float32"]']


def test_plugin_refuses_a_replay_across_backends(tmp_path):
    pytest.importorskip("triton")
    records = tmp_path / "musa_records"
    write_meta(records, backend="musa", flaggems_vendor="mthreads", triton_version="3.6.0")
    proc = _run_cell(tmp_path, "b", (100,), ZL_AUTOTUNE_MODE="replay", ZL_REPLAY_DIR=str(records))
    assert proc.returncode == 3, proc.stdout + proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if ln.startswith("PREFLIGHT_FAILED")]
    assert lines and lines[0].startswith("PREFLIGHT_FAILED check=replay_backend ")
    assert "backend=musa" in lines[0] and "BENCHED" not in proc.stdout


def test_plugin_is_inert_without_a_cell_or_when_uncontrolled(tmp_path):
    pytest.importorskip("triton")
    for mode in ("uncontrolled", "record"):
        test_dir = tmp_path / f"inert_{mode}"
        test_dir.mkdir()
        (test_dir / "test_cell.py").write_text("NS = (1, 2)\n" + CELL_TEST + textwrap.dedent("""
            def test_not_patched():
                assert "cache" not in Autotuner.__dict__
        """))
        env = _subprocess_env(ZL_AUTOTUNE_MODE=mode)
        if mode == "uncontrolled":
            env["ZL_CELL_DIR"] = str(tmp_path / "cell_u")
        proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p",
                               "zl_flaggems.cell.plugins.autotune", "test_cell.py"], cwd=test_dir,
                              capture_output=True, text=True, timeout=300, env=env)
        assert proc.returncode == 0, proc.stdout + proc.stderr
    assert not (tmp_path / "cell_u").exists()


def test_hubs_install_and_uninstall_cleanly_more_than_once(tmp_path, kernels, hub_factory):
    from zl_flaggems.cell.plugins.autotune import _CacheOverlay

    tuner, _, _ = _tuner(kernels, TIMES)
    for round_ in range(2):
        hub = hub_factory("record", tmp_path / f"r{round_}")
        assert isinstance(tuner.__dict__["cache"], _CacheOverlay)
        tuner.run(Tensorish(), Tensorish(), 64, grid=(1,))
        hub.uninstall()
        assert type(tuner.__dict__["cache"]) is dict
        assert len(read_records(tmp_path / f"r{round_}")) == 1
