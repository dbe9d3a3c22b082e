"""Shape injection (FlagGems' lookup order), shapes.yaml, row labels, and the
benchmark-API discovery the plugins rely on."""

from __future__ import annotations

import types

import pytest
import yaml
from zl_flaggems.cell import benchapi
from zl_flaggems.cell.plugins import shapes
from zl_flaggems.cell.rowclock import CLOCK


def make_api():
    """Fresh FlagGems-like classes in a fake ``benchmark.base`` module namespace."""

    class Benchmark:
        DEFAULT_SHAPES = ((7,),)

        def __init__(self, op_name):
            self.op_name = op_name
            self.shapes = self.DEFAULT_SHAPES
            self.shape_desc = "N"
            self.is_backward = False

        def set_shapes(self, shape_file_path=None):
            self.shapes = [(1,), (2,)]  # stands in for FlagGems' own YAML lookup

        def get_input_iter(self, dtype):
            for s in self.shapes:
                yield (("T", s),)

        def run(self):
            pass

        def record_shapes(self, *args, **kwargs):
            return [f"torch.Size([{', '.join(map(str, a[1]))}])" if isinstance(a, tuple) else a
                    for a in args]

        def unpack_to_args_kwargs(self, input_tuple):
            assert not self.is_backward, "must not unpack with cloning on"
            return list(input_tuple), {}

    class BlasBenchmark(Benchmark):
        pass

    class MmBench(BlasBenchmark):
        def set_shapes(self, shape_file_path=None):  # hard-coded, as many FlagGems files do
            super().set_shapes(shape_file_path)
            self.shapes = [(3, 3, 3, 3)]

    class Nested(Benchmark):
        def get_input_iter(self, dtype):
            yield from super().get_input_iter(dtype)

    mod = types.ModuleType("fake_test_module")
    mod.base = types.SimpleNamespace(Benchmark=Benchmark)
    mod.MmBench = MmBench
    mod.Nested = Nested
    mod.BlasBenchmark = BlasBenchmark
    return mod, Benchmark, BlasBenchmark, MmBench, Nested


@pytest.fixture(autouse=True)
def _fresh_state(monkeypatch, tmp_path):
    monkeypatch.setattr(shapes, "_used", {})
    monkeypatch.setattr(shapes, "_file_cache", {})
    monkeypatch.setattr(shapes, "_recorder_looked", True)
    monkeypatch.setattr(shapes, "_recorder", None)
    monkeypatch.setenv("ZL_CELL_DIR", str(tmp_path / "cell"))
    monkeypatch.delenv("ZL_SHAPE_FILE", raising=False)


def write_yaml(tmp_path, data) -> str:
    path = tmp_path / "shapes.in.yaml"
    path.write_text(yaml.safe_dump(data))
    return str(path)


def test_lookup_op_name_then_mro_nearest_first():
    _, Benchmark, _, MmBench, _ = make_api()
    data = {"BlasBenchmark": {"shapes": [[1, 2, 3, 4]]}, "Benchmark": {"shapes": [[9]]},
            "mm": {"shapes": [[5, 5, 5, 5]]}}
    assert shapes.lookup(data, "mm", MmBench)[0] == "mm"
    key, _, tried = shapes.lookup(data, "addmm", MmBench)
    assert key == "BlasBenchmark" and tried == ["addmm", "MmBench", "BlasBenchmark"]
    assert shapes.lookup(data, "add", Benchmark)[0] == "Benchmark"
    key, entry, tried = shapes.lookup({"other": {"shapes": []}}, "add", MmBench)
    assert key is None and entry is None and tried == ["add", "MmBench", "BlasBenchmark", "Benchmark"]


def test_lookup_follows_yaml_anchors(tmp_path):
    path = tmp_path / "a.yaml"
    path.write_text("base: &one\n  shapes: [[4, 4]]\n  shape_desc: M, N\nvdot:\n  <<: *one\n")
    _, Benchmark, *_ = make_api()
    key, entry, _ = shapes.lookup(shapes.load_shape_file(path), "vdot", Benchmark)
    assert key == "vdot" and entry["shapes"] == [[4, 4]]


def test_injection_overrides_hard_coded_shapes_once(tmp_path, monkeypatch):
    mod, _, _, MmBench, _ = make_api()
    monkeypatch.setenv("ZL_SHAPE_FILE", write_yaml(tmp_path, {
        "BlasBenchmark": {"shapes": [[2, 8, 8, 8], [1, 4, 4, 4]], "shape_desc": "B, M, N, K"}}))
    shapes.install([mod])
    bench = MmBench("mm")
    bench.set_shapes("ignored.yaml")
    assert bench.shapes == [(2, 8, 8, 8), (1, 4, 4, 4)]
    assert bench.shape_desc == "B, M, N, K"
    written = yaml.safe_load((tmp_path / "cell" / "shapes.yaml").read_text())
    assert written["mm"]["shapes"] == [[2, 8, 8, 8], [1, 4, 4, 4]]
    assert written["mm"]["source"].endswith("key=BlasBenchmark")


def test_no_entry_keeps_the_benchmarks_shapes(tmp_path, monkeypatch, capsys):
    mod, Benchmark, *_ = make_api()
    monkeypatch.setenv("ZL_SHAPE_FILE", write_yaml(tmp_path, {"mm": {"shapes": [[1]]}}))
    shapes.install([mod])
    bench = Benchmark("add")
    bench.set_shapes("x")
    assert bench.shapes == [(1,), (2,)]
    assert "tried add, Benchmark" in capsys.readouterr().out
    written = yaml.safe_load((tmp_path / "cell" / "shapes.yaml").read_text())
    assert written["add"]["source"].startswith("upstream (no entry")


def test_upstream_mode_records_the_shapes_used(tmp_path):
    mod, _, _, MmBench, _ = make_api()
    shapes.install([mod])
    bench = MmBench("mm")
    bench.set_shapes("x")
    assert bench.shapes == [(3, 3, 3, 3)]
    written = yaml.safe_load((tmp_path / "cell" / "shapes.yaml").read_text())
    assert written == {"mm": {"shapes": [[3, 3, 3, 3]], "shape_desc": "N", "source": "upstream"}}


def test_rows_counted_once_through_nested_iterators_with_labels(monkeypatch):
    mod, _, _, _, Nested = make_api()
    labels = []
    monkeypatch.setattr(shapes, "_recorder", types.SimpleNamespace(set_current_shape=labels.append))
    shapes.install([mod])
    start = CLOCK.seq
    bench = Nested("x")
    bench.set_shapes()
    items = list(bench.get_input_iter("float16"))
    assert len(items) == 2 and CLOCK.seq == start + 2
    assert labels == ["float16_1", "float16_2"]
    assert CLOCK.size_detail == "['torch.Size([2])']"
    assert bench.is_backward is False


def test_classes_defined_later_are_patched(monkeypatch):
    mod, Benchmark, *_ = make_api()
    shapes.install([mod])

    class Late(Benchmark):  # e.g. a class defined inside a test function
        def get_input_iter(self, dtype):
            yield (("T", (5, 6)),)

    start = CLOCK.seq
    list(Late("late").get_input_iter("torch.bfloat16"))
    assert CLOCK.seq == start + 1 and CLOCK.label == "bfloat16_5x6"


def test_install_is_idempotent():
    mod, Benchmark, *_ = make_api()
    shapes.install([mod])
    first = Benchmark.set_shapes
    shapes.install([mod])
    assert Benchmark.set_shapes is first
    assert getattr(first, benchapi.WRAPPED_FLAG)


@pytest.mark.parametrize("detail, label", [
    ("[torch.Size([1048576])]", "1048576"),
    ("[torch.Size([64, 64]), 1]", "64x64_1"),
    ("[torch.Size([1024, 1024]), torch.Size([1024, 1024])]", "1024x1024_1024x1024"),
    ("([torch.Size([4, 8])], {'dim': 1})", "4x8_dim_1"),
    ("[torch.Size([]), torch.float16]", "scalar_float16"),
])
def test_shape_label(detail, label):
    assert benchapi.shape_label(detail) == label


def test_row_label_prefixes_the_plain_dtype():
    assert benchapi.row_label("torch.float16", "[torch.Size([64, 64]), 1]") == "float16_64x64_1"
    assert benchapi.row_label(None, "[torch.Size([8])]") == "8"


def test_shape_label_is_bounded_and_path_safe():
    label = benchapi.shape_label("[" + ", ".join(f"torch.Size([{i}, {i}])" for i in range(200)) + "]")
    assert len(label) <= benchapi.MAX_LABEL and "/" not in label


def test_size_detail_matches_the_printed_form_and_restores_is_backward():
    _, Benchmark, *_ = make_api()
    bench = Benchmark("x")
    bench.is_backward = True
    bench.unpack_to_args_kwargs = lambda t: (list(t), {}) if not bench.is_backward else 1 / 0
    assert benchapi.size_detail_of(bench, (("T", (3, 4)), 1)) == "['torch.Size([3, 4])', 1]"
    assert bench.is_backward is True
    assert benchapi.format_size_detail(None) == "N/A"


def test_discover_roots_from_modules_and_classes():
    mod, Benchmark, _, MmBench, _ = make_api()
    assert benchapi.discover_roots([mod]) == {Benchmark}
    only_class = types.ModuleType("m")
    only_class.MmBench = MmBench  # legacy layout: classes imported by name
    assert benchapi.discover_roots([only_class]) == {Benchmark}
    assert benchapi.discover_roots([types.ModuleType("empty")]) == set()


def test_a_failing_patch_of_a_later_class_is_said_and_the_class_still_defined(capsys):
    _, Benchmark, *_ = make_api()
    benchapi.on_subclass(Benchmark, "shapes", lambda cls: 1 / 0)

    class Late(Benchmark):
        pass

    assert Late.__mro__[1] is Benchmark
    assert "[zl shapes] could not patch test_a_failing_patch_of_a_later_class_is_said_and_the_class_" \
           "still_defined.<locals>.Late: ZeroDivisionError: division by zero" in capsys.readouterr().out
